// Command pause is the sandbox process of a Pod for the local test images:
// it holds the Pod's namespaces, sleeps until SIGINT or SIGTERM and then
// exits 0, and reaps the zombies that are reparented to it as PID 1 of a
// shared process namespace. It does what registry.k8s.io/pause does, built
// from this repository so that a node can run without pulling an image.
//
// It is built with CGO_ENABLED=0 and packed by imagetool into the image
// kim-snatch-pause:e2e (`make images`).
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: pause (takes no arguments; stops on SIGINT or SIGTERM)")
		os.Exit(2)
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "pause: warning: not PID 1, so orphans in this process namespace are not reparented to it")
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	// A child that exited before Notify sent its SIGCHLD to no one.
	reap()
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap waits for every exited child without blocking. Signals coalesce, so
// one SIGCHLD may stand for several children.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
