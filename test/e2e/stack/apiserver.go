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
	total := 0.0
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_admission_webhook_fail_open_count{") || !strings.Contains(line, `name="`+webhook+`"`) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return total, sc.Err()
}
