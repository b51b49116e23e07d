// Package process builds the project's binaries and runs them as child
// processes for integration tests, end-to-end tests, benchmarks and the
// local environment of `make run`.
//
// Every child is started with PR_SET_PDEATHSIG, so the kernel kills it when
// the process that started it dies, however that happens.
package process
