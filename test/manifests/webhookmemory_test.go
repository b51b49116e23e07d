package manifests

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kyma-project/kim-snatch/pkg/admission"
	"github.com/kyma-project/kim-snatch/pkg/serving"
)

// goMemLimit parses a GOMEMLIMIT as the Go runtime does: a number of bytes
// with an optional unit of B, KiB, MiB, GiB or TiB.
func goMemLimit(t *testing.T, v string) int64 {
	t.Helper()
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	shift := uint(0)
	for _, u := range units {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			v, shift = n, u.shift
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		t.Fatalf("GOMEMLIMIT %q is not a positive number of bytes with a unit the Go runtime reads", v)
	}
	return n << shift
}

// The webhook's GOMEMLIMIT is below its memory limit, so that the collector
// works harder before the kernel kills the replica; the request bodies it
// holds at once fit under GOMEMLIMIT beside what a replica needs without them
// (its memory request).
func TestWebhookMemoryFitsTheShippedLimit(t *testing.T) {
	for _, dir := range []string{webhookBase, defaultInstall} {
		t.Run(strings.ReplaceAll(dir, "/", "_"), func(t *testing.T) {
			c := container(t, deployment(t, render(t, dir), "snatch-webhook"))
			limit, request := c.Resources.Limits.Memory(), c.Resources.Requests.Memory()
			if limit.IsZero() || request.IsZero() {
				t.Fatalf("the webhook has no memory limit or request: %v", c.Resources)
			}
			var soft string
			for _, e := range c.Env {
				if e.Name == "GOMEMLIMIT" {
					soft = e.Value
				}
			}
			if soft == "" {
				t.Fatal("the webhook container sets no GOMEMLIMIT")
			}
			gomem := goMemLimit(t, soft)
			if gomem >= limit.Value() {
				t.Errorf("GOMEMLIMIT %s (%d bytes) is not below the memory limit %s", soft, gomem, limit)
			}
			bodies := admission.DefaultInFlightBodyBytes
			if v, ok := flags(t, c)["max-in-flight-body-bytes"]; ok {
				if bodies, _ = strconv.Atoi(v); bodies <= 0 {
					t.Fatalf("--max-in-flight-body-bytes=%s is not a positive number", v)
				}
			}
			if need := int64(bodies) + request.Value(); need > gomem {
				t.Errorf("the bodies in flight (%d bytes) and the memory request %s need %d bytes, more than GOMEMLIMIT %s",
					bodies, request, need, resource.NewQuantity(gomem, resource.BinarySI))
			}
		})
	}
}

// The webhook listener gives a request as long as the API server waits for
// it, timeoutSeconds, and at most serving.RequestTimeoutMargin
// more: a shorter one cuts calls the API server still waits for, a longer one
// leaves connections to clients no API server waits for.
func TestWebhookTimeoutsMatchTheAPIServers(t *testing.T) {
	w := mutatingWebhook(t)
	if w.TimeoutSeconds == nil {
		t.Fatal("the webhook sets no timeoutSeconds")
	}
	apiServer := time.Duration(*w.TimeoutSeconds) * time.Second
	c := container(t, deployment(t, render(t, webhookBase), "snatch-webhook"))
	got := serving.DefaultRequestTimeout
	if v, ok := flags(t, c)["request-timeout"]; ok {
		var err error
		if got, err = time.ParseDuration(v); err != nil {
			t.Fatalf("--request-timeout=%s: %v", v, err)
		}
	}
	if got < apiServer || got > apiServer+serving.RequestTimeoutMargin {
		t.Errorf("the webhook's request timeout is %s, want from timeoutSeconds (%s) to %s more", got, apiServer, serving.RequestTimeoutMargin)
	}
}
