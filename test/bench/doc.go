// Package bench is the harness behind `make bench`. It measures both
// binaries as users and operators meet them, each figure against a baseline
// measured in the same run, on loopback only, in five sections: webhook,
// handler, apiserver, syncer and check, each described on the function that
// runs it (webhookSection and so on).
//
// Run builds the binaries, starts every process it needs as a child with
// PR_SET_PDEATHSIG, and returns a Results that WriteJSON and WriteTable
// render. Every loop is bounded by a Config figure, so the same code runs
// the full benchmark (cmd/snatch-bench) and the smoke test of `go test`.
package bench
