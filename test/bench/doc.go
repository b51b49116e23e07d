// Package bench is the harness behind `make bench`. It measures both
// binaries as users and operators meet them, each figure against a baseline
// measured in the same run, on loopback only:
//
//   - webhook: the snatch-webhook binary over TLS keep-alive, pinned to one
//     core with the load generator on another, against a reference server
//     that decodes the whole review and Pod and diffs the patch
//     (cmd/generic-webhook);
//   - handler: the Go benchmarks of pkg/admission;
//   - apiserver: Pod creation through a real kube-apiserver with no
//     mutation, with the webhook, and with an equivalent
//     MutatingAdmissionPolicy, in interleaved rounds;
//   - syncer: the cabundle-syncer binary's Secret-to-caBundle propagation
//     against a plain watch, and its memory with and without many unrelated
//     Secrets;
//   - check: `cabundle-syncer check` against a control plane that holds
//     tens of thousands of Pods, its peak RSS and wall time against the
//     unpaginated Pod reads it once made (cmd/unpaged-pods).
//
// Run builds the binaries, starts every process it needs as a child with
// PR_SET_PDEATHSIG, and returns a Results that WriteJSON and WriteTable
// render. Every loop is bounded by a Config figure, so the same code runs
// the full benchmark (cmd/snatch-bench) and the smoke test of `go test`.
package bench
