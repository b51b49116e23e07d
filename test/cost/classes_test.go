package cost

import "testing"

func TestClassify(t *testing.T) {
	cases := []struct {
		name    string
		cmdline []string
		comm    string
		want    string
	}{
		{name: "binary_is_named_by_the_basename_of_its_path", cmdline: []string{"/usr/local/bin/kube-apiserver", "--etcd-servers=x"}, comm: "kube-apiserver", want: "kube-apiserver"},
		{name: "binary_named_operator_is_the_prometheus_operator", cmdline: []string{"/bin/operator", "--log-level=info"}, comm: "operator", want: "prometheus-operator"},
		{name: "binary_named_manager_is_kim_snatch", cmdline: []string{"/manager"}, comm: "manager", want: "kim-snatch"},
		{name: "any_containerd_shim_is_one_class", cmdline: []string{"/usr/local/bin/containerd-shim-runc-v2", "-namespace", "k8s.io"}, comm: "containerd-shim", want: ClassContainerShim},
		{name: "containerd_itself_is_its_own_class", cmdline: []string{"/usr/local/bin/containerd"}, comm: "containerd", want: "containerd"},
		{name: "test_binary_is_a_test_binary", cmdline: []string{"/tmp/go-build1/b001/e2e.test", "-test.v=test2json"}, comm: "e2e.test", want: ClassTestBinaries},
		{name: "compiler_is_the_go_toolchain", cmdline: []string{"/usr/local/go/pkg/tool/linux_amd64/compile", "-o", "x"}, comm: "compile", want: ClassGoToolchain},
		{name: "go_command_is_the_go_toolchain", cmdline: []string{"go", "test", "-json"}, comm: "go", want: ClassGoToolchain},
		{name: "kernel_thread_without_a_command_line_is_named_by_comm", comm: "kworker/0:1-events", want: ClassOther},
		{name: "empty_command_line_falls_back_to_comm", cmdline: []string{""}, comm: "kubelet", want: "kubelet"},
		{name: "rewritten_command_line_is_named_by_its_first_word", cmdline: []string{"/usr/bin/coredns -conf /etc/coredns/Corefile"}, comm: "coredns", want: "coredns"},
		{name: "unknown_binary_is_other", cmdline: []string{"/usr/bin/bash", "-c", "true"}, comm: "bash", want: ClassOther},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.cmdline, tc.comm); got != tc.want {
				t.Errorf("Classify(%q, %q) = %q, want %q", tc.cmdline, tc.comm, got, tc.want)
			}
		})
	}
}
