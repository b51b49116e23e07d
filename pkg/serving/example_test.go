package serving_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/serving"
)

// The watcher reads the pair from a directory that kubelet updates as it
// updates a Secret volume, and serves the last good pair to every TLS
// handshake through GetCertificate.
func ExampleCertWatcher() {
	dir, err := os.MkdirTemp("", "certs")
	if err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	cert, err := certtest.NewSelfSigned(certtest.Options{CommonName: "snatch-webhook.kyma-system.svc"})
	if err != nil {
		panic(err)
	}
	if err := certtest.WriteAtomic(dir, cert.Files()); err != nil {
		panic(err)
	}

	watcher, err := serving.NewCertWatcher(serving.CertWatcherOptions{
		CertFile: filepath.Join(dir, certtest.CertFile),
		KeyFile:  filepath.Join(dir, certtest.KeyFile),
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = watcher.Start(ctx) }()
	for !watcher.Loaded() {
		time.Sleep(10 * time.Millisecond)
	}

	served, err := watcher.GetCertificate(nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(served.Leaf.Subject.CommonName)
	// Output: snatch-webhook.kyma-system.svc
}
