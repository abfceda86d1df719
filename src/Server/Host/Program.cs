using Laharsub.Server.Hosting;

// Everything lives in StandaloneHost so that tests and tools run the very same composition.
StandaloneHost.Build(args).Run();
