package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// metricsReaderRole is the ClusterRole of deploy/syncer/rbac.yaml that
// Prometheus is to be bound to.
const metricsReaderRole = "cabundle-syncer-metrics-reader"

// With --metrics-secure, /metrics answers only a token that the API server
// authenticates and whose user may get /metrics; the syncer checks both
// under the RBAC of the manifests.
func TestSecureMetricsNeedATokenAllowedToGetMetrics(t *testing.T) {
	c := newCluster(t)
	cs := c.Clientset
	caA := certtest.MustCA(t, certtest.Options{CommonName: "ca-a"})
	setupObjects(t, cs, caA)
	applyRBAC(t, c)
	_, kubeconfig := serviceAccountConfig(t, c)

	allowed, stranger := bindScrapers(t, cs)

	p := startSyncer(t, "syncer", append([]string{"--kubeconfig=" + kubeconfig, "--metrics-secure=true"}, leaseFlags...)...)
	waitBundle(t, cs, caA.Fingerprint())

	scrape := waitSecureMetrics(t, p.metrics)

	tests := []struct {
		name     string
		token    string
		wantCode int // 0: any refusal
	}{
		{name: "no_token_gets_401", wantCode: http.StatusUnauthorized},
		// controller-runtime answers a token that the TokenReview rejects
		// with 500, not 401; only the refusal matters here.
		{name: "invalid_token_is_refused", token: "not-a-token"},
		{name: "unbound_service_account_gets_403", token: stranger, wantCode: http.StatusForbidden},
		{name: "metrics_reader_gets_the_metrics", token: allowed, wantCode: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, err := scrape(tt.token)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.wantCode == 0 && code < 400:
				t.Fatalf("GET /metrics = %d %q, want a refusal", code, firstLine(body))
			case tt.wantCode != 0 && code != tt.wantCode:
				t.Fatalf("GET /metrics = %d %q, want %d", code, firstLine(body), tt.wantCode)
			}
			if code == http.StatusOK && !strings.Contains(body, "cabundle_syncer_in_sync") {
				t.Errorf("the metrics lack cabundle_syncer_in_sync:\n%s", firstLine(body))
			}
			if code != http.StatusOK && strings.Contains(body, "cabundle_syncer_") {
				t.Errorf("a refused scrape got metrics:\n%s", firstLine(body))
			}
		})
	}
	if log := p.Log(); strings.Contains(log, "forbidden") {
		t.Errorf("the syncer was refused something:\n%s", grepLines(log, "forbidden"))
	}
}

// bindScrapers creates a scraper bound to the metrics-reader role and one
// that is not, and returns their tokens. The syncer caches denials for
// 30 s, so the binding must be in effect before the first scrape.
func bindScrapers(t *testing.T, cs kubernetes.Interface) (allowed, stranger string) {
	t.Helper()
	ctx := context.Background()
	const scraperNamespace = "monitoring"
	if err := syncertest.CreateNamespace(ctx, cs, scraperNamespace); err != nil {
		t.Fatal(err)
	}
	allowed = scraperToken(t, cs, scraperNamespace, "prometheus")
	stranger = scraperToken(t, cs, scraperNamespace, "stranger")
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-cabundle-syncer-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReaderRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "prometheus", Namespace: scraperNamespace}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMayGetMetrics(t, cs, "system:serviceaccount:"+scraperNamespace+":prometheus")
	return allowed, stranger
}

// waitSecureMetrics waits until the metrics endpoint at addr answers over
// TLS, wants it to refuse plain HTTP, and returns a scrape with a token
// ("" for none). The certificate is self-signed, as for Prometheus (the
// ServiceMonitor's insecureSkipVerify); the protection under test is the
// token check.
func waitSecureMetrics(t *testing.T, addr string) func(token string) (int, string, error) {
	t.Helper()
	ctx := context.Background()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	scrape := func(token string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	// The server is up once it answers anything over TLS.
	poll.Eventually(t, "an answer over HTTPS from the metrics endpoint "+addr, func(context.Context) error {
		_, _, err := scrape("")
		return err
	})
	if code, _, err := plainScrape(addr); err == nil && code == http.StatusOK {
		t.Error("/metrics answers plain HTTP with 200")
	}
	return scrape
}

// scraperToken creates the ServiceAccount namespace/name and returns a token
// for it.
func scraperToken(t *testing.T, cs kubernetes.Interface, namespace, name string) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// waitMayGetMetrics waits until the authorizer lets user get /metrics.
func waitMayGetMetrics(t *testing.T, cs kubernetes.Interface, user string) {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:                  user,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
	}}
	poll.Eventually(t, "the authorizer to let "+user+" get /metrics", func(ctx context.Context) error {
		res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		switch {
		case err != nil:
			return err
		case !res.Status.Allowed:
			return fmt.Errorf("%s may not get /metrics: %s", user, res.Status.Reason)
		}
		return nil
	})
}

func plainScrape(addr string) (int, string, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
