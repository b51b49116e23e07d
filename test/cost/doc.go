// Package cost is the tool behind `make test-cost`: it runs `go test -json`
// under a sampler of /proc and tells what each top-level test and each
// package's set-up and tear-down cost the machine (wall, CPU-seconds and the
// wall time the cores had nothing to do), and what each long-running process
// of the test stack used over the whole run (docs/benchmarks.md, "What the
// suite costs").
//
// ReadEvents reads the event stream, Recording folds the samples of /proc
// into segments of CPU time, and Compute turns both into a Report that
// WriteMarkdown and WriteJSON render. These are pure over their inputs;
// Sampler and Run are the thin parts that read /proc and run the command.
package cost
