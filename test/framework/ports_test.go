package framework

import (
	"net"
	"strconv"
	"testing"
)

func TestFreePortsNeverRepeatsAndStaysBelowTheEphemeralRange(t *testing.T) {
	lo, hi := portRange()
	seen := map[int]bool{}
	for range 50 {
		got, err := FreePorts(4)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range got {
			if seen[p] {
				t.Fatalf("port %d handed out twice", p)
			}
			seen[p] = true
			if p < lo || p >= hi {
				t.Fatalf("port %d outside [%d, %d)", p, lo, hi)
			}
		}
	}
	p, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		t.Fatalf("port %d handed out but not bindable: %v", p, err)
	}
	_ = l.Close()
}
