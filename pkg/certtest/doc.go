// Package certtest is the one test PKI of the repository: it makes the
// certificates the tests, the benchmark and the local stack need, and writes
// them the way kubelet writes a Secret volume. Each has an ECDSA P-256 key.
//
//   - NewCA: a self-signed CA, as cert-management's selfSigned issuer with
//     isCA: true issues it; it serves its Options' names, ca.crt is tls.crt.
//   - NewSelfSigned: the same without isCA, a serving certificate that is
//     no CA (what the syncer must refuse as a source).
//   - Cert.Issue: a serving certificate signed by a CA; Cert.IssueCA a CA.
//
// Each returns an error; the Must variants fail a test instead. Like every
// test helper package it is imported by tests, the benchmark and the local
// stack only: test/manifests fails when other code under cmd/ or pkg/
// imports it.
package certtest
