package stack

import (
	"bufio"
	"bytes"
	"context"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// FailOpenCount returns kube-apiserver's
// apiserver_admission_webhook_fail_open_count for the webhook entry: how
// often a call to the webhook failed and the Pod was admitted without it.
// A series that does not exist yet counts 0.
func FailOpenCount(ctx context.Context, cs kubernetes.Interface, webhook string) (float64, error) {
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	return SumSamples(body, "apiserver_admission_webhook_fail_open_count", `name="`+webhook+`"`)
}

// SumSamples adds up the samples of metric in a text exposition whose
// labels hold every one of the label pairs (`name="value"`); 0 when none
// does.
func SumSamples(exposition []byte, metric string, labels ...string) (float64, error) {
	total := 0.0
	sc := bufio.NewScanner(bytes.NewReader(exposition))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		series, value, ok := strings.Cut(line, "} ")
		if !ok || !strings.HasPrefix(series, metric+"{") {
			continue
		}
		if !allIn(series, labels) {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return total, sc.Err()
}

func allIn(series string, labels []string) bool {
	for _, l := range labels {
		if !strings.Contains(series, "{"+l+",") && !strings.Contains(series, ","+l+",") &&
			!strings.HasSuffix(series, "{"+l) && !strings.HasSuffix(series, ","+l) {
			return false
		}
	}
	return true
}
