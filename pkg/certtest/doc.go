// Package certtest is the one test PKI of the repository: it makes the
// certificates the tests, the benchmark and the local stack need, and writes
// them the way kubelet writes a Secret volume.
//
// It makes three kinds of certificate, each with an ECDSA P-256 key, which
// keeps generating dozens of them cheap:
//
//   - NewCA: a self-signed CA, as Gardener cert-management's selfSigned
//     issuer with isCA: true issues it. The CA is the serving certificate
//     for the names in its Options, and ca.crt is tls.crt.
//   - NewSelfSigned: the same issuer without isCA, a self-signed serving
//     certificate that is no CA (what the syncer must refuse as a source).
//   - Cert.Issue: a serving certificate signed by a CA, as kube-apiserver or
//     cert-manager's CA issuer would write it.
//
// Each returns an error; the Must variants fail a test instead. A Cert
// carries its PEM encodings and offers the tls.Certificate, x509 pool,
// Secret files and fingerprint that tests need.
//
// The name follows the repository's <subject>test helper packages
// (syncertest, checktest) and the standard library's httptest: the subject
// is certificates, used by every package's tests, so the package lives
// directly under pkg/ rather than under one of its users. Like every test
// helper package it is imported by tests, the benchmark and the local test
// stack only: test/manifests fails when a non-test file under cmd/ or pkg/,
// other than another test helper, imports it.
package certtest
