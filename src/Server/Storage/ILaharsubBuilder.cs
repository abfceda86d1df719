using Microsoft.Extensions.DependencyInjection;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>What <c>AddLaharsub</c> returns, for extensions that choose a store: <c>services.AddLaharsub().AddRedis(...)</c>.</summary>
public interface ILaharsubBuilder
{
    /// <summary>The application's services.</summary>
    IServiceCollection Services { get; }
}
