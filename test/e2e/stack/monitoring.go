package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/test/realnode"
)

// The monitoring stack of test/e2e/neighbours/monitoring.
const (
	Monitoring = "test/e2e/neighbours/monitoring"
	// MonitoringNamespace holds prometheus-operator, the two Prometheus,
	// the Alertmanager main and the kube-state-metrics stand-in.
	MonitoringNamespace = "monitoring"
)

// The monitoring profiles of docs/operations.md, by the value of the
// external label profile of their Prometheus, which Alertmanager's
// notifications carry.
const (
	// ProfileAPIServer: the kube-apiserver is scraped too.
	ProfileAPIServer = "apiserver"
	// ProfileShoot: the kube-apiserver is out of reach.
	ProfileShoot = "shoot"
)

// Profiles names the Prometheus of each profile.
var Profiles = map[string]string{ProfileAPIServer: "k8s", ProfileShoot: "shoot"}

// AlertReceiverAddr is where Alertmanager main sends notifications
// (alertmanager.yaml there): the node's address.
var AlertReceiverAddr = net.JoinHostPort(realnode.NodeIP, "19093")

// MonitoringImages are the archives `make images` writes of the stack, for
// realnode.ClusterOptions.Images.
var MonitoringImages = []string{"prometheus.tar", "prometheus-config-reloader.tar", "prometheus-operator.tar", "alertmanager.tar", "kube-state-metrics.tar"}

// Prometheus returns a client of the HTTP API of the Prometheus name, at
// its Pod's address, which the host reaches over the Pod bridge.
func Prometheus(ctx context.Context, cs kubernetes.Interface, name string) (promv1.API, error) {
	pods, err := cs.CoreV1().Pods(MonitoringNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=prometheus,operator.prometheus.io/name=" + name})
	if err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
			c, err := promapi.NewClient(promapi.Config{Address: "http://" + net.JoinHostPort(p.Status.PodIP, "9090")})
			if err != nil {
				return nil, err
			}
			return promv1.NewAPI(c), nil
		}
	}
	return nil, fmt.Errorf("no running Pod of Prometheus %s in %s", name, MonitoringNamespace)
}

// Notification is one alert of a notification that Alertmanager sent, in
// its webhook format.
type Notification struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	// Received is when the suite received it.
	Received time.Time `json:"-"`
}

// AlertReceiver is the receiver of the Alertmanager main: it records every
// alert of every notification.
type AlertReceiver struct {
	srv *http.Server
	mu  sync.Mutex
	got []Notification
}

// StartAlertReceiver listens on AlertReceiverAddr, which exists while the
// real node runs.
func StartAlertReceiver() (*AlertReceiver, error) {
	l, err := net.Listen("tcp", AlertReceiverAddr)
	if err != nil {
		return nil, fmt.Errorf("alert receiver: %w", err)
	}
	r := &AlertReceiver{}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.receive), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

func (r *AlertReceiver) receive(w http.ResponseWriter, req *http.Request) {
	var msg struct {
		Alerts []Notification `json:"alerts"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, req.Body, 1<<20)).Decode(&msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	now := time.Now()
	r.mu.Lock()
	for _, a := range msg.Alerts {
		a.Received = now
		r.got = append(r.got, a)
	}
	r.mu.Unlock()
}

// Received returns the alerts received since since, in order.
func (r *AlertReceiver) Received(since time.Time) []Notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(r.got), func(n Notification) bool { return n.Received.Before(since) })
}

// Stop stops listening.
func (r *AlertReceiver) Stop() error {
	if r == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
