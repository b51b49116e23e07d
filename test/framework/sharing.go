package framework

import "testing"

// The tests of a node suite share one installation (docs/development.md,
// "Tests that share the installation"). Each says, right after its tier,
// whether it leaves the installation as it found it (Shares), or breaks
// it (Alone): pkg/conventions holds them to it.

// Shares marks t as a test that changes nothing of the installation but
// what it owns (its namespaces, made with Namespace), and so runs beside
// the other such tests. go test runs those after every test that breaks
// the installation has run, never beside one.
func Shares(t *testing.T) {
	t.Helper()
	t.Parallel()
}

// Alone marks t as a test that breaks the installation, as breaks says,
// and so runs alone: go test runs a test that does not call t.Parallel
// before the ones that do, one at a time.
func Alone(t *testing.T, breaks string) {
	t.Helper()
	if breaks == "" {
		t.Fatal("framework.Alone: say what the test breaks")
	}
	t.Logf("runs alone: %s", breaks)
}
