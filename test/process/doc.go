// Package process builds the project's binaries and runs them as child
// processes for tests, benchmarks and `make run`. The kernel kills every
// child when the process that started it dies (PR_SET_PDEATHSIG).
package process
