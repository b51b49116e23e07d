package realnode

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kyma-project/kim-snatch/test/process"
)

// restartGrace is how long a restarted component may take to stop after
// SIGTERM, as systemd's default stop timeout would allow it, shortened.
const restartGrace = 10 * time.Second

// Restart stops one of the node's components, "containerd", "kubelet" or
// "kube-proxy", as `systemctl restart` does: SIGTERM, and SIGKILL after
// restartGrace. It starts it again with the same command line, its output
// in <name>.<n>.log, and returns once the Node is Ready again. The
// containers live on through a restart of containerd or the kubelet, as
// they do on a real node.
func (n *Node) Restart(ctx context.Context, name string) error {
	i := slices.IndexFunc(n.procs, func(c *component) bool { return c.Name == name })
	if i < 0 {
		return fmt.Errorf("the node runs no %s", name)
	}
	c := n.procs[i]
	c.Stop(restartGrace)
	c.restarts++
	o := c.opts
	o.LogPath = filepath.Join(n.dir, fmt.Sprintf("%s.%d.log", name, c.restarts))
	p, err := process.Start(o)
	if err != nil {
		return err
	}
	c.Process = p
	return n.waitReady(ctx)
}

// InsertRule inserts an iptables rule at the head of chain in table, for a
// fault of the node's network, and returns what deletes it again.
func InsertRule(table, chain string, rule ...string) (remove func() error, err error) {
	if _, err := run(append([]string{"iptables", "-w", "-t", table, "-I", chain, "1"}, rule...)...); err != nil {
		return nil, err
	}
	return func() error {
		_, err := run(append([]string{"iptables", "-w", "-t", table, "-D", chain}, rule...)...)
		return err
	}, nil
}

// ForgetConnections deletes the kernel's connection tracking entries of
// the TCP connections to dst:port, so that the NAT rules in force now
// apply to their next packets as to a new connection's.
func ForgetConnections(dst string, port int) error {
	out, err := run("conntrack", "-D", "-p", "tcp", "--orig-dst", dst, "--orig-port-dst", strconv.Itoa(port))
	if err != nil && !strings.Contains(err.Error(), "0 flow entries") {
		return fmt.Errorf("%w%s", err, out)
	}
	return nil
}

// AbortConnections aborts the TCP connections to dst:port in the network
// namespace of process pid, as the kernel's socket destroy does (ss -K):
// the process sees each connection reset and connects anew. Unlike
// forgetting a connection's tracking entry, which leaves it open, this
// leaves no socket behind retransmitting into a path that now drops it.
func AbortConnections(pid, dst string, port int) error {
	out, err := run("nsenter", "-t", pid, "-n", "ss", "-tnK", "dst", net.JoinHostPort(dst, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("%w%s", err, out)
	}
	return nil
}
