// Command probe is the client of the NetworkPolicy tests of test/e2e on
// the real node: it opens one connection from a Pod and says how far it
// got, in one line that starts with "ok" or "fail", on stdout and as the
// container's termination message.
//
//	probe [-after D] tcp  HOST:PORT   the TCP handshake
//	probe [-after D] tls  HOST:PORT   the TCP and the TLS handshake (certificate not verified)
//	probe [-after D] http URL         a GET, any status
//
// A dropped connection shows as a timeout, a closed port as a refusal. It
// exits 0 for ok, 1 for fail and 2 for a usage error, and is packed by
// imagetool into the image kim-snatch-probe:e2e (`make images`;
// docs/development.md, "NetworkPolicies on the real node").
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	after := flag.Duration("after", 0, "how long to wait before connecting")
	timeout := flag.Duration("timeout", 5*time.Second, "how long the connection may take")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: probe [-after D] [-timeout D] tcp|tls HOST:PORT | http URL")
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	time.Sleep(*after)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	detail, err := probe(ctx, flag.Arg(0), flag.Arg(1))
	if err != nil {
		report(fmt.Sprintf("fail %s %s: %v", flag.Arg(0), flag.Arg(1), err))
		cancel()
		os.Exit(1)
	}
	report(fmt.Sprintf("ok %s %s: %s", flag.Arg(0), flag.Arg(1), detail))
}

// report prints line, and writes it as the container's termination
// message where the kubelet provides the file, so that the Pod's status
// carries it.
func report(line string) {
	fmt.Println(line)
	if f, err := os.OpenFile(terminationLog, os.O_WRONLY|os.O_TRUNC, 0); err == nil {
		_, _ = f.WriteString(line)
		_ = f.Close()
	}
}

const terminationLog = "/dev/termination-log"

// probe opens one connection of the given kind to target.
func probe(ctx context.Context, kind, target string) (string, error) {
	var d net.Dialer
	switch kind {
	case "tcp":
		c, err := d.DialContext(ctx, "tcp", target)
		if err != nil {
			return "", err
		}
		defer c.Close()
		return "connected from " + c.LocalAddr().String(), nil
	case "tls":
		td := tls.Dialer{NetDialer: &d, Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // reachability only, see the package doc
		c, err := td.DialContext(ctx, "tcp", target)
		if err != nil {
			return "", err
		}
		defer c.Close()
		return "TLS " + tls.VersionName(c.(*tls.Conn).ConnectionState().Version) + " from " + c.LocalAddr().String(), nil
	case "http":
		client := &http.Client{Transport: &http.Transport{
			DialContext:     d.DialContext,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // reachability only, see the package doc
		}}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		n, _ := io.Copy(io.Discard, resp.Body)
		return fmt.Sprintf("HTTP %d, %d bytes", resp.StatusCode, n), nil
	}
	return "", fmt.Errorf("unknown kind %q (tcp, tls or http)", kind)
}
