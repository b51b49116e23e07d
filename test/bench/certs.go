package bench

import (
	"fmt"
	"testing"
)

// fixtureTB lets the harness, which is not a test, use the certificate
// helpers of pkg/serving/certtest and pkg/syncer/syncertest. Those call
// only Helper and Fatal/Fatalf; a failure panics with fixtureFailure, which
// fixture turns back into an error. The embedded interface is never set:
// any other method would be a programming error and panics.
type fixtureTB struct{ testing.TB }

type fixtureFailure struct{ msg string }

func (fixtureTB) Helper()                   {}
func (fixtureTB) Fatal(args ...any)         { panic(fixtureFailure{fmt.Sprint(args...)}) }
func (fixtureTB) Fatalf(f string, a ...any) { panic(fixtureFailure{fmt.Sprintf(f, a...)}) }

// fixture runs f with a fixtureTB and returns its failure as an error.
func fixture(f func(t testing.TB)) (err error) {
	defer func() {
		if v := recover(); v != nil {
			ff, ok := v.(fixtureFailure)
			if !ok {
				panic(v)
			}
			err = fmt.Errorf("fixture: %s", ff.msg)
		}
	}()
	f(fixtureTB{})
	return nil
}
