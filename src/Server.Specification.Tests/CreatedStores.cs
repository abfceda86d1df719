namespace Laharsub.Server.Specification;

/// <summary>Disposes the stores a specification created, as their types allow.</summary>
internal static class CreatedStores
{
    public static async Task DisposeAsync(IEnumerable<object> stores)
    {
        foreach (var store in stores)
        {
            switch (store)
            {
                case IAsyncDisposable asyncDisposable:
                    await asyncDisposable.DisposeAsync().ConfigureAwait(false);
                    break;
                case IDisposable disposable:
                    disposable.Dispose();
                    break;
            }
        }
    }
}
