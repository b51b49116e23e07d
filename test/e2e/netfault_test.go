package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/realnode"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// Faults of the network between kube-apiserver and the webhook, as the
// Gardener VPN between a seed and its shoot has them, made by Toxiproxy
// (hack/tools/toxiproxy), unmodified. It runs as a host process under an
// unprivileged user; an iptables rule sends root's connections to the
// webhook's Service, kube-apiserver's, to it, and it passes them on to
// the Service, slowed or cut by its toxics.

// toxiproxyUser runs the proxy, so that its own connections to the
// Service are not sent back to it.
const toxiproxyUser = "65534"

// toxiproxy is the proxy and its API.
type toxiproxy struct {
	api string // http://127.0.0.1:<port>
}

// slowPath starts Toxiproxy between kube-apiserver and the webhook's
// Service, and returns it; the test's cleanup takes it away again.
func slowPath(t *testing.T) *toxiproxy {
	t.Helper()
	tp, listen := startToxiproxy(t)
	svc, err := sys.Clientset().CoreV1().Services(stack.Namespace).Get(t.Context(), stack.ServiceName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	upstream := svc.Spec.ClusterIP + ":443"
	if err := tp.call(t.Context(), http.MethodPost, "/proxies", map[string]any{
		"name": "webhook", "listen": "127.0.0.1:" + strconv.Itoa(listen), "upstream": upstream, "enabled": true,
	}); err != nil {
		t.Fatal(err)
	}
	redirectToProxy(t, svc.Spec.ClusterIP, listen)
	logf("toxiproxy: kube-apiserver → 127.0.0.1:%d → Service %s (%s)", listen, stack.ServiceName, upstream)
	return tp
}

// startToxiproxy starts Toxiproxy as toxiproxyUser with its API on a free
// port, and waits until it answers; the test's cleanup stops it. listen
// is another free port, for the proxy.
func startToxiproxy(t *testing.T) (tp *toxiproxy, listen int) {
	t.Helper()
	bin := tools.Toxiproxy.Path(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatal(err)
	}
	ports, err := framework.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	port := ports[0]
	p, err := process.Start(process.Options{
		Name: "toxiproxy", Path: setpriv,
		Args: []string{"--reuid", toxiproxyUser, "--regid", toxiproxyUser, "--clear-groups", "--pdeathsig", "KILL", "--",
			bin, "-host", "127.0.0.1", "-port", strconv.Itoa(port)},
		LogPath: filepath.Join(t.TempDir(), "toxiproxy.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	tp = &toxiproxy{api: "http://127.0.0.1:" + strconv.Itoa(port)}
	err = poll.Until(t.Context(), "toxiproxy to answer", func(ctx context.Context) error {
		return tp.call(ctx, http.MethodGet, "/version", nil)
	}, poll.Timeout(30*time.Second))
	if err != nil {
		t.Fatalf("%v\n%s", err, p.LogTail(20))
	}
	return tp, ports[1]
}

// redirectToProxy sends root's connections to clusterIP:443, kube-apiserver's,
// to the proxy's port, and has kube-apiserver dial the webhook again
// through it; the test's cleanup removes the rule.
func redirectToProxy(t *testing.T, clusterIP string, port int) {
	t.Helper()
	remove, err := realnode.InsertRule("nat", "OUTPUT", "-p", "tcp", "-d", clusterIP, "--dport", "443",
		"-m", "owner", "--uid-owner", "0", "-j", "DNAT", "--to-destination", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := remove(); err != nil {
			t.Error(err)
		}
	})
	// kube-apiserver keeps its connections to the webhook open: forget
	// them, so that their next packets meet the rule, and have it call the
	// webhook until it has dialled again, before the scenario counts.
	if err := realnode.ForgetConnections(clusterIP, 443); err != nil {
		t.Fatal(err)
	}
	warm := namespace(t, "e2e-slowpath", true)
	for range 40 {
		_, _ = sys.Clientset().CoreV1().Pods(warm).Create(t.Context(), gatedPod("warm"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	}
}

// toxic adds a toxic to the webhook's path, and returns what removes it.
func (tp *toxiproxy) toxic(ctx context.Context, name, typ, stream string, toxicity float64, attrs map[string]any) (remove func() error, err error) {
	err = tp.call(ctx, http.MethodPost, "/proxies/webhook/toxics", map[string]any{
		"name": name, "type": typ, "stream": stream, "toxicity": toxicity, "attributes": attrs,
	})
	if err != nil {
		return nil, err
	}
	return func() error {
		return tp.call(context.Background(), http.MethodDelete, "/proxies/webhook/toxics/"+name, nil)
	}, nil
}

func (tp *toxiproxy) call(ctx context.Context, method, path string, body any) error {
	var r *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	} else {
		r = bytes.NewReader(nil)
	}
	req, err := http.NewRequestWithContext(ctx, method, tp.api+path, r)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode >= 300 {
		var msg bytes.Buffer
		_, _ = msg.ReadFrom(resp.Body)
		return fmt.Errorf("toxiproxy %s %s: %s: %s", method, path, resp.Status, msg.String())
	}
	return nil
}

// cutSyncersOff drops every packet from the syncer's Pods to
// kube-apiserver, which serves on the node's address, also where they dial
// the kubernetes Service; heal takes the rules away.
func cutSyncersOff(t *testing.T) (heal func()) {
	t.Helper()
	pods := runningPods(t, stack.SyncerName)
	var removes []func() error
	for _, p := range pods {
		remove, err := realnode.InsertRule("filter", "INPUT", "-s", p.Status.PodIP, "-d", realnode.NodeIP, "-p", "tcp", "--dport", "443", "-j", "DROP")
		if err != nil {
			t.Fatal(err)
		}
		removes = append(removes, remove)
	}
	healed := false
	heal = func() {
		if healed {
			return
		}
		healed = true
		for _, r := range removes {
			if err := r(); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(heal)
	return heal
}
