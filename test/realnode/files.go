package realnode

import (
	"bytes"
	"os"
	"path/filepath"
	"text/template"
)

// containerdConfig keeps containerd's state in the node's folder. containerd
// 1.6 needs restrict_oom_score_adj where root lacks CAP_SYS_RESOURCE, and its
// network namespaces under the state folder so that Clean finds them.
const containerdConfig = `version = 2
root = "{{.Dir}}/containerd/root"
state = "{{.Dir}}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "{{.Dir}}/containerd.sock"
[ttrpc]
  address = "{{.Dir}}/containerd.sock.ttrpc"
[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "{{.Dir}}/containerd/opt"
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "{{.Sandbox}}"
    netns_mounts_under_state_dir = true
    restrict_oom_score_adj = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = "{{.Dir}}/runc"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "{{.Dir}}/cni/net.d"
`

// cniConfig attaches each Pod to PodBridge with an address from PodSubnet.
// Nothing is masqueraded: no Pod has a reason to reach beyond the machine.
const cniConfig = `{"cniVersion": "0.4.0", "name": "kim-snatch", "plugins": [{"type": "bridge", "bridge": "{{.Bridge}}",
  "isGateway": true, "ipMasq": false, "hairpinMode": true,
  "ipam": {"type": "host-local", "ranges": [[{"subnet": "{{.Subnet}}"}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "{{.Dir}}/cni/ipam"}}]}
`

// kubeletConfig runs the kubelet on a cgroup v1 host without systemd. Its
// syncFrequency is the default, so Secret volumes follow their Secret as
// slowly as in a cluster. Pods get no resolver: nothing they resolve may
// leave the machine. Its ports, like kube-proxy's, are the defaults, on
// NodeIP, which belongs to this node alone.
const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://{{.Dir}}/containerd.sock
podLogsDir: {{.Dir}}/pod-logs
address: {{.IP}}
port: 10250
readOnlyPort: 0
healthzBindAddress: {{.IP}}
healthzPort: 10248
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
failSwapOn: false
resolvConf: ""
registerWithTaints: [{key: "{{.Taint}}", value: "", effect: "NoSchedule"}]
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
`

// proxyConfig leaves the host's conntrack limits and route_localnet alone.
const proxyConfig = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
hostnameOverride: {{.Name}}
clientConnection: {kubeconfig: {{.Kubeconfig}}}
bindAddress: {{.IP}}
healthzBindAddress: {{.IP}}:10256
metricsBindAddress: {{.IP}}:10249
clusterCIDR: {{.PodCIDR}}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s, udpTimeout: 0s, udpStreamTimeout: 0s}
iptables: {localhostNodePorts: false}
`

// configVars fill the configuration templates.
type configVars struct {
	Dir, IP, Name, Kubeconfig, Sandbox, Bridge, Subnet, PodCIDR, Taint string
}

// writeConfigs writes the components' configuration into the state folder.
func (n *Node) writeConfigs() error {
	vars := configVars{
		Dir: n.dir, IP: NodeIP, Name: SystemNodeName, Kubeconfig: n.kubeconfig,
		Sandbox: SandboxImage, Bridge: PodBridge, Subnet: PodSubnet, PodCIDR: PodCIDR, Taint: SystemNodeLabel,
	}
	files := map[string]string{
		"containerd.toml":                  containerdConfig,
		"cni/net.d/10-kim-snatch.conflist": cniConfig,
		"kubelet.yaml":                     kubeletConfig,
		"kube-proxy.yaml":                  proxyConfig,
	}
	for name, text := range files {
		var b bytes.Buffer
		if err := template.Must(template.New(name).Parse(text)).Execute(&b, vars); err != nil {
			return err
		}
		path := filepath.Join(n.dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
