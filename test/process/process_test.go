package process

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The test binary doubles as the child: with childEnv set it prints a line,
// waits for SIGTERM and exits with code 7.
const childEnv = "PROCESS_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM)
		fmt.Println("child started")
		<-sig
		fmt.Println("child terminating")
		os.Exit(7)
	}
	os.Exit(m.Run())
}

func TestStopTerminatesAndKeepsTheLog(t *testing.T) {
	p, err := Start(Options{Name: "child", Path: os.Args[0], Env: []string{childEnv + "=1"}, LogPath: filepath.Join(t.TempDir(), "child.log")})
	if err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, "the child to start", func(context.Context) error {
		if strings.Contains(p.Log(), "child started") {
			return nil
		}
		if p.Exited() {
			return poll.Stop(fmt.Errorf("the child exited; log: %q", p.Log()))
		}
		return fmt.Errorf("log: %q", p.Log())
	})
	if rss, err := p.RSS(); err != nil || rss <= 0 {
		t.Errorf("RSS() = %d, %v; want > 0", rss, err)
	}
	if _, err := CPUTime(p.PID()); err != nil {
		t.Errorf("CPUTime: %v", err)
	}
	p.Stop(30 * time.Second)
	code, err := p.Wait(time.Second)
	if err != nil || code != 7 {
		t.Fatalf("Wait() = %d, %v; want exit code 7 from the SIGTERM handler", code, err)
	}
	if got := p.LogTail(1); got != "child terminating" {
		t.Errorf("LogTail(1) = %q, want %q", got, "child terminating")
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("Signal after exit = %v, want nil", err)
	}
}

func TestMetricReadsOnlyTheExactSeries(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# HELP x_total a counter\n# TYPE x_total counter\nx_total{result=\"error\"} 2\nx_total{result=\"success\"} 5\nx_total_other 9\nup 1\n")
	}))
	defer srv.Close()
	tests := []struct {
		name, labels string
		want         float64
		wantErr      bool
	}{
		{name: "x_total", labels: `{result="success"}`, want: 5},
		{name: "x_total", labels: `{result="error"}`, want: 2},
		{name: "up", want: 1},
		{name: "x_total", wantErr: true},
		{name: "missing", wantErr: true},
	}
	for _, tt := range tests {
		got, err := Metric(srv.Client(), srv.URL, tt.name, tt.labels)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("Metric(%s%s) = %v, %v; want %v, error %v", tt.name, tt.labels, got, err, tt.want, tt.wantErr)
		}
	}
}
