package framework

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

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
