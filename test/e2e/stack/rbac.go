package stack

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// SyncerServiceAccount is the ServiceAccount of deploy/syncer, in
// Namespace. The local syncers authenticate as it.
const SyncerServiceAccount = "cabundle-syncer"

// syncerTokenTTL is the lifetime of the local syncers' tokens. The kubelet
// refreshes a Pod's projected token; nothing refreshes these, so they
// outlast any test run or `make run` session instead.
const syncerTokenTTL = 7 * 24 * time.Hour

// SyncerRBAC is the ServiceAccount and the RBAC of deploy/syncer, as
// kustomize renders them.
type SyncerRBAC struct {
	ServiceAccounts     []*corev1.ServiceAccount
	Roles               []*rbacv1.Role
	RoleBindings        []*rbacv1.RoleBinding
	ClusterRoles        []*rbacv1.ClusterRole
	ClusterRoleBindings []*rbacv1.ClusterRoleBinding
}

// RenderSyncerRBAC renders deploy/syncer with kubectl kustomize and returns
// its ServiceAccount and RBAC objects; the other kinds (Deployment,
// ServiceMonitor, ...) are left out. It fails when one of the five kinds is
// missing, so that a manifest change cannot quietly leave the local
// syncers with less than the shipped permissions, or more.
func RenderSyncerRBAC() (*SyncerRBAC, error) {
	out, err := Kustomize("syncer")
	if err != nil {
		return nil, err
	}
	rbac := &SyncerRBAC{}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read deploy/syncer: %w", err)
		}
		var meta metav1.TypeMeta
		if err := utilyaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("read deploy/syncer: %w", err)
		}
		switch meta.Kind {
		case "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding":
		default:
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("decode %s of deploy/syncer: %w", meta.Kind, err)
		}
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			rbac.ServiceAccounts = append(rbac.ServiceAccounts, o)
		case *rbacv1.Role:
			rbac.Roles = append(rbac.Roles, o)
		case *rbacv1.RoleBinding:
			rbac.RoleBindings = append(rbac.RoleBindings, o)
		case *rbacv1.ClusterRole:
			rbac.ClusterRoles = append(rbac.ClusterRoles, o)
		case *rbacv1.ClusterRoleBinding:
			rbac.ClusterRoleBindings = append(rbac.ClusterRoleBindings, o)
		}
	}
	if len(rbac.ServiceAccounts) == 0 || len(rbac.Roles) == 0 || len(rbac.RoleBindings) == 0 ||
		len(rbac.ClusterRoles) == 0 || len(rbac.ClusterRoleBindings) == 0 {
		return nil, fmt.Errorf("deploy/syncer renders %d ServiceAccounts, %d Roles, %d RoleBindings, %d ClusterRoles and %d ClusterRoleBindings; want at least one of each",
			len(rbac.ServiceAccounts), len(rbac.Roles), len(rbac.RoleBindings), len(rbac.ClusterRoles), len(rbac.ClusterRoleBindings))
	}
	return rbac, nil
}

// Create creates every object in the cluster of cs.
func (r *SyncerRBAC) Create(ctx context.Context, cs kubernetes.Interface) error {
	wrap := func(kind, name string, err error) error {
		return fmt.Errorf("create %s %s from deploy/syncer: %w", kind, name, err)
	}
	opts := metav1.CreateOptions{}
	for _, o := range r.ServiceAccounts {
		if _, err := cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, opts); err != nil {
			return wrap("ServiceAccount", o.Namespace+"/"+o.Name, err)
		}
	}
	for _, o := range r.Roles {
		if _, err := cs.RbacV1().Roles(o.Namespace).Create(ctx, o, opts); err != nil {
			return wrap("Role", o.Namespace+"/"+o.Name, err)
		}
	}
	for _, o := range r.RoleBindings {
		if _, err := cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, opts); err != nil {
			return wrap("RoleBinding", o.Namespace+"/"+o.Name, err)
		}
	}
	for _, o := range r.ClusterRoles {
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, o, opts); err != nil {
			return wrap("ClusterRole", o.Name, err)
		}
	}
	for _, o := range r.ClusterRoleBindings {
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, o, opts); err != nil {
			return wrap("ClusterRoleBinding", o.Name, err)
		}
	}
	return nil
}

// applySyncerRBAC creates the ServiceAccount and RBAC of deploy/syncer, so
// that the local syncers run with exactly the permissions they ship with.
// The stack then proves on every start that those permissions suffice:
// Start waits for a syncer to lead and write the caBundle.
func (s *Stack) applySyncerRBAC(ctx context.Context) error {
	rbac, err := RenderSyncerRBAC()
	if err != nil {
		return err
	}
	s.opts.Progress("creating ServiceAccount %s/%s and the RBAC of deploy/syncer for the syncers", Namespace, SyncerServiceAccount)
	return rbac.Create(ctx, s.Clientset)
}

// SyncerKubeconfig returns the kubeconfig syncer replica i runs with: the
// ServiceAccount's token, as a syncer Pod has it.
func (s *Stack) SyncerKubeconfig(i int) string {
	return s.syncerKubeconfigPath(s.Syncers[i].Name)
}

func (s *Stack) syncerKubeconfigPath(name string) string {
	return filepath.Join(s.opts.Dir, name+".kubeconfig")
}

// writeSyncerKubeconfig gives replica name a token of its own, as each Pod
// gets its own, and writes the kubeconfig that carries it.
func (s *Stack) writeSyncerKubeconfig(ctx context.Context, name string) error {
	return WriteServiceAccountKubeconfig(ctx, s.Clientset, s.Cluster.KubeconfigPath, Namespace, SyncerServiceAccount, syncerTokenTTL, s.syncerKubeconfigPath(name))
}

// WriteServiceAccountKubeconfig writes to path a kubeconfig for the cluster
// of adminKubeconfig's current context that authenticates as ServiceAccount
// namespace/name, with a token from the TokenRequest API valid for ttl.
// Any cluster with service account token signing works, the local one and
// kind alike.
func WriteServiceAccountKubeconfig(ctx context.Context, cs kubernetes.Interface, adminKubeconfig, namespace, name string, ttl time.Duration, path string) error {
	admin, err := clientcmd.LoadFromFile(adminKubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig %s: %w", adminKubeconfig, err)
	}
	current, ok := admin.Contexts[admin.CurrentContext]
	if !ok {
		return fmt.Errorf("kubeconfig %s: no current context", adminKubeconfig)
	}
	cluster, ok := admin.Clusters[current.Cluster]
	if !ok {
		return fmt.Errorf("kubeconfig %s: no cluster %q", adminKubeconfig, current.Cluster)
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(ttl / time.Second))},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("request a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	user := "system:serviceaccount:" + namespace + ":" + name
	kc := clientcmdapi.NewConfig()
	kc.Clusters["cluster"] = cluster.DeepCopy()
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["cluster"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: user}
	kc.CurrentContext = "cluster"
	return clientcmd.WriteToFile(*kc, path)
}
