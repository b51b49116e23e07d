package framework

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
)

// FreePorts returns n distinct loopback TCP ports that were free when
// checked, for processes the test is about to start.
//
// A port chosen by binding to port 0 comes from the kernel's ephemeral
// range, which the kernel also hands to every outgoing connection and
// which it readily hands out again once the probe socket is closed. Two
// components of one test then end up on the same port. FreePorts instead
// draws at random from below the ephemeral range, never returns the same
// port twice in one test process, and confirms each port with a bind.
func FreePorts(n int) ([]int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	lo, hi := portRange()
	out := make([]int, 0, n)
	for attempts := 0; len(out) < n; attempts++ {
		if attempts > 1000 {
			return nil, fmt.Errorf("no free loopback port in [%d, %d) after %d attempts", lo, hi, attempts)
		}
		p := lo + rand.IntN(hi-lo)
		if handedPorts[p] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		_ = l.Close()
		handedPorts[p] = true
		out = append(out, p)
	}
	return out, nil
}

// FreePort is FreePorts for one port.
func FreePort() (int, error) {
	p, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

var (
	portsMu     sync.Mutex
	handedPorts = map[int]bool{}
)

// portRange is the range FreePorts draws from: from 10000 up to the start
// of the kernel's ephemeral range (32768 when it cannot be read).
func portRange() (lo, hi int) {
	lo, hi = 10000, 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	var start int
	if _, scanErr := fmt.Sscan(string(b), &start); err == nil && scanErr == nil && start > lo+1000 {
		hi = start
	}
	return lo, hi
}
