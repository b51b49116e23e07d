// Package logtest compares the example log lines of the documents with the
// lines the binaries write: the same keys in the same order, each with the
// same JSON type, and a time that parses with cmdline.LogTimeLayout. The
// tests of both commands use it, and Buffer, a log's destination that
// handlers write to concurrently and a test reads, with the tests of
// pkg/admission.
//
// It is imported by tests only.
package logtest
