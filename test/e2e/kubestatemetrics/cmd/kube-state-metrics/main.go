// Command kube-state-metrics is the stand-in of package kubestatemetrics,
// run as users run the real one: in a Pod, with in-cluster credentials,
// serving /metrics on :8080 and /healthz, with the real one's
// --metric-labels-allowlist and --metric-opt-in-list.
package main

import (
	"context"
	"errors"
	"log"
	"net/http"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
	"github.com/kyma-project/kim-snatch/test/e2e/kubestatemetrics"
)

func main() { cmdline.Main("kube-state-metrics", run) }

func run(ctx context.Context) error {
	opts, err := kubestatemetrics.ParseFlags(os.Args[1:])
	if err != nil {
		return err
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		b, err := kubestatemetrics.Write(r.Context(), cs, opts)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(b)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := &http.Server{Addr: ":8080", Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("serving /metrics on %s, labels %v, opt-in %v", srv.Addr, opts.Allowlist, opts.OptIn)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
