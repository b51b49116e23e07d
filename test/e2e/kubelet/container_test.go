package kubelet

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkTable fails t for every input of cases that f does not map to its
// wanted output.
func checkTable(t *testing.T, name string, f func(string) string, cases map[string]string) {
	t.Helper()
	for in, want := range cases {
		if got := f(in); got != want {
			t.Errorf("%s(%q) = %q, want %q", name, in, got, want)
		}
	}
}

func TestImageName(t *testing.T) {
	checkTable(t, "ImageName", ImageName, map[string]string{
		"europe-docker.pkg.dev/kyma-project/prod/snatch-webhook:0.0.0-unreleased": "snatch-webhook",
		"localhost:5000/cabundle-syncer@sha256:0123":                              "cabundle-syncer",
		"registry:5000/team/app:v1@sha256:0123":                                   "app",
		"snatch-webhook":                                                          "snatch-webhook",
	})
}

func TestExpand(t *testing.T) {
	env := map[string]string{"NS": "kyma-system", "EMPTY": ""}
	checkTable(t, "expand", func(s string) string { return expand(s, env) }, map[string]string{
		"--ns=$(NS)":        "--ns=kyma-system",
		"$(NS)/$(NS)":       "kyma-system/kyma-system",
		"$(MISSING)":        "$(MISSING)",
		"$$(NS)":            "$(NS)",
		"$(EMPTY)x":         "x",
		"$(NS":              "$(NS",
		"cost: $5":          "cost: $5",
		"trailing $":        "trailing $",
		"$$$(NS)":           "$kyma-system",
		"no references":     "no references",
		"--a=$(NS)-$$-$(X)": "--a=kyma-system-$-$(X)",
	})
}

func TestRewriteArg(t *testing.T) {
	ports := &portMap{m: map[int32]int{8080: 20080, 9443: 20443}}
	for in, want := range map[string]string{
		"--metrics-bind-address=:8080":              "--metrics-bind-address=127.0.0.1:20080",
		"--health-probe-bind-address=0.0.0.0:8080":  "--health-probe-bind-address=127.0.0.1:20080",
		"-metrics-bind-address=[::]:8080":           "-metrics-bind-address=127.0.0.1:20080",
		"--webhook-port=9443":                       "--webhook-port=20443",
		"--metrics-bind-address=0":                  "--metrics-bind-address=0",
		"--metrics-bind-address=:0":                 "--metrics-bind-address=:0",
		"--cert-dir=/etc/certs":                     "--cert-dir=/etc/certs",
		"--bind-address=127.0.0.1":                  "--bind-address=127.0.0.1",
		"positional:8080":                           "positional:8080",
		"--other-port=8080":                         "--other-port=8080",
		"--leader-election-namespace=$(NAMESPACE)":  "--leader-election-namespace=$(NAMESPACE)",
		"--health-probe-bind-address=localhost:808": "",
	} {
		got, err := rewriteArg(in, ports)
		if err != nil {
			t.Fatal(err)
		}
		if want == "" {
			// A port not seen before gets a new loopback port.
			if !strings.HasPrefix(got, "--health-probe-bind-address=127.0.0.1:") || ports.m[808] == 0 {
				t.Errorf("rewriteArg(%q) = %q, want a new port for 808", in, got)
			}
			continue
		}
		if got != want {
			t.Errorf("rewriteArg(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRewritePaths(t *testing.T) {
	mounts := []mount{{path: "/etc/kim-snatch/certs", dir: "/w/certs"}, {path: "/tmp", dir: "/w/tmp"}}
	checkTable(t, "rewritePaths", func(s string) string { return rewritePaths(s, mounts) }, map[string]string{
		"--cert-dir=/etc/kim-snatch/certs":          "--cert-dir=/w/certs",
		"--cert=/etc/kim-snatch/certs/tls.crt":      "--cert=/w/certs/tls.crt",
		"--cert-dir=/etc/kim-snatch/certs2":         "--cert-dir=/etc/kim-snatch/certs2",
		"/tmp:/tmp/x,/tmpfile":                      "/w/tmp:/w/tmp/x,/tmpfile",
		"--dir=/var/tmp":                            "--dir=/var/tmp",
		"--paths=/etc/kim-snatch/certs,/tmp/socket": "--paths=/w/certs,/w/tmp/socket",
	})
}

func TestFieldValue(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u", Labels: map[string]string{"a/b": "c"}},
		Spec:       corev1.PodSpec{NodeName: "n"},
		Status:     corev1.PodStatus{HostIP: "192.0.2.1"},
	}
	for path, want := range map[string]string{
		"metadata.name": "p", "metadata.namespace": "ns", "metadata.uid": "u", "metadata.labels['a/b']": "c",
		"metadata.annotations['x']": "", "spec.nodeName": "n", "spec.serviceAccountName": "default",
		"status.hostIP": "192.0.2.1", "status.podIP": "",
	} {
		if got, err := fieldValue(pod, path); err != nil || got != want {
			t.Errorf("fieldValue(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := fieldValue(pod, "spec.unknown"); err == nil {
		t.Error("fieldValue(spec.unknown) succeeded")
	}
}

func TestPhase(t *testing.T) {
	always, never := &corev1.Pod{}, &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}}
	for _, tt := range []struct {
		name                                 string
		pod                                  *corev1.Pod
		terminal                             bool
		running, waiting, stopped, succeeded int
		want                                 corev1.PodPhase
	}{
		{"creating", always, false, 0, 1, 0, 0, corev1.PodPending},
		{"running", always, false, 1, 0, 0, 0, corev1.PodRunning},
		{"restarting", always, false, 0, 0, 1, 0, corev1.PodRunning},
		{"never, failed", never, true, 0, 0, 1, 0, corev1.PodFailed},
		{"never, succeeded", never, true, 0, 0, 1, 1, corev1.PodSucceeded},
		{"deleted after SIGTERM", always, true, 0, 0, 1, 1, corev1.PodSucceeded},
		{"deleted before the start", always, true, 0, 1, 0, 0, corev1.PodFailed},
	} {
		if got := phase(tt.pod, tt.terminal, tt.running, tt.waiting, tt.stopped, tt.succeeded); got != tt.want {
			t.Errorf("%s: phase = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestHasFlag(t *testing.T) {
	args := []string{"check", "--kubeconfig=/k", "-v"}
	if !hasFlag(args, "kubeconfig") || hasFlag(args, "kube") || !hasFlag([]string{"-kubeconfig", "/k"}, "kubeconfig") {
		t.Error("hasFlag misreads the arguments")
	}
}
