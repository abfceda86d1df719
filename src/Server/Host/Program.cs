using Laharsub.Server.Host;
using Laharsub.Server.Hosting;

// "token" prints a development token (see TokenCommand); anything else runs the server. Everything
// else lives in StandaloneHost so that tests and tools run the very same composition.
if (args is ["token", ..])
{
    return TokenCommand.Run(args[1..]);
}
StandaloneHost.Build(args).Run();
return 0;
