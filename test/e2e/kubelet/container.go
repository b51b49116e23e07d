package kubelet

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// Container is one container of a Pod as the stand-in starts it: its spec,
// with what a container would find in the Pod resolved to this machine.
type Container struct {
	// Pod is the Pod as the stand-in last saw it before the start.
	Pod *corev1.Pod
	// Spec is the container's spec in the Pod, unchanged.
	Spec corev1.Container
	// Command and Args are the container's, with $(VAR) references
	// expanded from Env as the kubelet expands them, every
	// --*-bind-address=[host]:N and --webhook-port=N rewritten to the
	// loopback port that Ports maps N to, and every volume mount path
	// rewritten to the directory Mounts maps it to.
	Command, Args []string
	// Env is the container's environment as KEY=VALUE, resolved as the
	// kubelet resolves env and envFrom (values, $(VAR) references, the
	// downward API's fieldRef, ConfigMap and Secret keys), then HOSTNAME,
	// and KUBECONFIG when the ServiceAccount token is mounted.
	Env []string
	// Ports maps every port a container of the Pod listens on (declared
	// container ports, ports of the rewritten flags, probe ports) to the
	// loopback port it listens on instead. The Pod's containers share one
	// map, as they share a network namespace.
	Ports map[int32]int
	// Mounts maps the mount path of each mounted Secret or emptyDir volume
	// to the directory that holds it. A Secret volume's directory is
	// filled before the start, and follows the Secret with
	// Options.ProjectionDelay.
	Mounts map[string]string
	// Config and Client authenticate as the Pod's ServiceAccount, and
	// Kubeconfig is a kubeconfig file for them, when its token is mounted
	// (automountServiceAccountToken not false on the Pod, or, when the Pod
	// does not say, on the ServiceAccount); nil and empty otherwise.
	Config     *rest.Config
	Client     kubernetes.Interface
	Kubeconfig string
	// LogPath is the file for the container's output, one per start.
	LogPath string
	// RestartCount is the container's restart count with this start.
	RestartCount int
}

// Port returns the loopback port that a container port, by number or by
// the name of a port the container declares, maps to.
func (c *Container) Port(p intstr.IntOrString) (int, bool) {
	n, ok := containerPort(&c.Spec, p)
	if !ok {
		return 0, false
	}
	actual, ok := c.Ports[n]
	return actual, ok
}

// Addr is Port as 127.0.0.1:<port>, or "" when p maps to no port.
func (c *Container) Addr(p intstr.IntOrString) string {
	actual, ok := c.Port(p)
	if !ok {
		return ""
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(actual))
}

// containerPort resolves p to a port number: a number as it is, a name to
// the container port of that name.
func containerPort(c *corev1.Container, p intstr.IntOrString) (int32, bool) {
	if p.Type == intstr.Int {
		return p.IntVal, p.IntVal > 0
	}
	for _, cp := range c.Ports {
		if cp.Name != "" && cp.Name == p.StrVal {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

// portMap maps container ports to loopback ports from
// framework.FreePorts, allocating each on first use.
type portMap struct {
	mu sync.Mutex
	m  map[int32]int
}

func (p *portMap) actual(n int32) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.m[n]; ok {
		return a, nil
	}
	a, err := framework.FreePort()
	if err != nil {
		return 0, err
	}
	if p.m == nil {
		p.m = map[int32]int{}
	}
	p.m[n] = a
	return a, nil
}

func (p *portMap) lookup(n int32) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := p.m[n]
	return a, ok
}

func (p *portMap) snapshot() map[int32]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.m)
}

// portFlags are the flags whose value is a bare port number.
var portFlags = []string{"webhook-port"}

// rewriteArg rewrites a --*-bind-address or port flag to its loopback
// port, leaving "0" (disabled) and port 0 (any port) alone.
func rewriteArg(arg string, ports *portMap) (string, error) {
	flag, value, ok := strings.Cut(arg, "=")
	if !ok || !strings.HasPrefix(flag, "-") {
		return arg, nil
	}
	name := strings.TrimLeft(flag, "-")
	switch {
	case strings.HasSuffix(name, "bind-address"):
		_, port, err := net.SplitHostPort(value)
		if err != nil {
			return arg, nil
		}
		n, err := strconv.ParseInt(port, 10, 32)
		if err != nil || n <= 0 {
			return arg, nil
		}
		a, err := ports.actual(int32(n))
		if err != nil {
			return "", err
		}
		return flag + "=" + net.JoinHostPort("127.0.0.1", strconv.Itoa(a)), nil
	case slices.Contains(portFlags, name):
		n, err := strconv.ParseInt(value, 10, 32)
		if err != nil || n <= 0 {
			return arg, nil
		}
		a, err := ports.actual(int32(n))
		if err != nil {
			return "", err
		}
		return flag + "=" + strconv.Itoa(a), nil
	}
	return arg, nil
}

// mount is a volume mount path and the directory that holds the volume.
type mount struct{ path, dir string }

// rewritePaths replaces each mount path in s with its directory where
// the path stands whole: neither preceded nor followed by a letter,
// digit, ".", "-" or "_" (so /tmp matches in /tmp/x and /tmp:, not in
// /tmpfile or /var/tmp). mounts are sorted longest path first.
func rewritePaths(s string, mounts []mount) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		matched := false
		for _, m := range mounts {
			end := i + len(m.path)
			if !strings.HasPrefix(s[i:], m.path) || (end < len(s) && isNameByte(s[end])) || (i > 0 && isNameByte(s[i-1])) {
				continue
			}
			b.WriteString(m.dir)
			i, matched = end, true
			break
		}
		if !matched {
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

func isNameByte(c byte) bool {
	return c == '.' || c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// expand expands $(VAR) references in s as the kubelet does: a defined
// variable is replaced by its value, an undefined reference stays as it
// is, and $$ is an escaped $.
func expand(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := env[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// envResolver resolves a container's environment against the API.
type envResolver struct {
	client kubernetes.Interface
	pod    *corev1.Pod
}

// resolve returns the container's environment in order (envFrom, then
// env; a later variable of the same name wins) and as a map.
func (r envResolver) resolve(ctx context.Context, c *corev1.Container) ([]string, map[string]string, error) {
	env := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := env[k]; !ok {
			order = append(order, k)
		}
		env[k] = v
	}
	for _, from := range c.EnvFrom {
		data, err := r.envFrom(ctx, from)
		if err != nil {
			return nil, nil, err
		}
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			set(from.Prefix+k, data[k])
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, env))
			continue
		}
		v, ok, err := r.valueFrom(ctx, e.ValueFrom)
		if err != nil {
			return nil, nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			set(e.Name, v)
		}
	}
	list := make([]string, 0, len(order))
	for _, k := range order {
		list = append(list, k+"="+env[k])
	}
	return list, env, nil
}

func (r envResolver) envFrom(ctx context.Context, from corev1.EnvFromSource) (map[string]string, error) {
	ns := r.pod.Namespace
	switch {
	case from.ConfigMapRef != nil:
		cm, err := r.client.CoreV1().ConfigMaps(ns).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{})
		if err != nil {
			if ptrTrue(from.ConfigMapRef.Optional) {
				return nil, nil
			}
			return nil, fmt.Errorf("envFrom ConfigMap %s: %w", from.ConfigMapRef.Name, err)
		}
		return cm.Data, nil
	case from.SecretRef != nil:
		s, err := r.client.CoreV1().Secrets(ns).Get(ctx, from.SecretRef.Name, metav1.GetOptions{})
		if err != nil {
			if ptrTrue(from.SecretRef.Optional) {
				return nil, nil
			}
			return nil, fmt.Errorf("envFrom Secret %s: %w", from.SecretRef.Name, err)
		}
		out := make(map[string]string, len(s.Data))
		for k, v := range s.Data {
			out[k] = string(v)
		}
		return out, nil
	}
	return nil, nil
}

// valueFrom resolves one env source; ok is false for a missing optional
// key.
func (r envResolver) valueFrom(ctx context.Context, src *corev1.EnvVarSource) (string, bool, error) {
	ns := r.pod.Namespace
	switch {
	case src.FieldRef != nil:
		v, err := fieldValue(r.pod, src.FieldRef.FieldPath)
		return v, err == nil, err
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		cm, err := r.client.CoreV1().ConfigMaps(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err == nil {
			if v, ok := cm.Data[ref.Key]; ok {
				return v, true, nil
			}
			err = fmt.Errorf("ConfigMap %s has no key %s", ref.Name, ref.Key)
		}
		if ptrTrue(ref.Optional) {
			return "", false, nil
		}
		return "", false, err
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		s, err := r.client.CoreV1().Secrets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err == nil {
			if v, ok := s.Data[ref.Key]; ok {
				return string(v), true, nil
			}
			err = fmt.Errorf("secret %s has no key %s", ref.Name, ref.Key)
		}
		if ptrTrue(ref.Optional) {
			return "", false, nil
		}
		return "", false, err
	}
	return "", false, fmt.Errorf("the stand-in resolves only fieldRef, configMapKeyRef and secretKeyRef")
}

// fieldValue is the downward API's value of path for pod. The Pod has no
// IP here, so status.podIP and status.podIPs are empty.
func fieldValue(pod *corev1.Pod, path string) (string, error) {
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return cmp.Or(pod.Spec.ServiceAccountName, "default"), nil
	case "status.hostIP":
		return pod.Status.HostIP, nil
	case "status.hostIPs":
		ips := make([]string, 0, len(pod.Status.HostIPs))
		for _, ip := range pod.Status.HostIPs {
			ips = append(ips, ip.IP)
		}
		return strings.Join(ips, ","), nil
	case "status.podIP", "status.podIPs":
		return "", nil
	}
	return "", fmt.Errorf("fieldRef %s is not served by the stand-in", path)
}

// subscript returns key for path "<prefix>['<key>']".
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

func ptrTrue(b *bool) bool { return b != nil && *b }
