using BenchmarkDotNet.Running;

// Pick benchmarks with --filter, e.g. --filter '*Publish*'; '--job short' for a quick look while developing.
BenchmarkSwitcher.FromAssembly(typeof(Laharsub.Benchmarks.BackendFactory).Assembly).Run(args);
