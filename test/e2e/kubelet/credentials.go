package kubelet

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// tokenTTL is the lifetime of a Pod's ServiceAccount token. The kubelet
// refreshes the projected token before it expires; the stand-in does
// not, so the token outlasts any test instead.
const tokenTTL = 24 * time.Hour

// tokenMounted reports whether the Pod gets its ServiceAccount's token,
// as the ServiceAccount admission plugin decides: the Pod's
// automountServiceAccountToken if set, else the ServiceAccount's, else
// true. The ServiceAccount must exist.
func (k *Kubelet) tokenMounted(ctx context.Context, pod *corev1.Pod) (bool, error) {
	name := cmp.Or(pod.Spec.ServiceAccountName, "default")
	sa, err := k.client.CoreV1().ServiceAccounts(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("ServiceAccount %s/%s: %w", pod.Namespace, name, err)
	}
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken, nil
	}
	return sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken, nil
}

// serviceAccountConfig requests a token for the Pod's ServiceAccount,
// bound to the Pod as the kubelet's projected token is (it stops working
// when the Pod is deleted), and returns a config that authenticates with
// it at the API server of Options.Config, and writes a kubeconfig for it
// to path.
func (k *Kubelet) serviceAccountConfig(ctx context.Context, pod *corev1.Pod, path string) (*rest.Config, error) {
	name := cmp.Or(pod.Spec.ServiceAccountName, "default")
	tr, err := k.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To(int64(tokenTTL / time.Second)),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("request a token for ServiceAccount %s/%s: %w", pod.Namespace, name, err)
	}
	admin := k.opts.Config
	cfg := &rest.Config{
		Host:        admin.Host,
		APIPath:     admin.APIPath,
		BearerToken: tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure: admin.Insecure, ServerName: admin.ServerName,
			CAFile: admin.CAFile, CAData: admin.CAData,
		},
	}
	ca := admin.CAData
	if len(ca) == 0 && admin.CAFile != "" {
		if ca, err = os.ReadFile(admin.CAFile); err != nil {
			return nil, err
		}
	}
	user := "system:serviceaccount:" + pod.Namespace + ":" + name
	kc := clientcmdapi.NewConfig()
	kc.Clusters["cluster"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: ca,
		InsecureSkipTLSVerify: admin.Insecure, TLSServerName: admin.ServerName}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["cluster"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: user, Namespace: pod.Namespace}
	kc.CurrentContext = "cluster"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return nil, err
	}
	return cfg, nil
}
