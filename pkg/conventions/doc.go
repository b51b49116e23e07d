// Package conventions holds no code: its tests check the rules that hold
// for all Go code of the repository. Production code (pkg/ and cmd/,
// without tests and the test helper packages) follows all of them; tests,
// test helpers, test/ and hack/ follow the same rules, with room for a
// long table of cases (docs/development.md, "Conventions"). The production
// code of the two binaries and of pkg/check keeps tighter limits on
// function and line length (limits_test.go).
package conventions
