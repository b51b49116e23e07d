package process

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Metric scrapes a Prometheus text endpoint and returns the value of the
// series whose name and label text match exactly, e.g. name
// "cabundle_syncer_is_leader" and labels "" or `{result="success"}`.
func Metric(client *http.Client, url, name, labels string) (float64, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	series := name + labels
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, series+" ")
		if !ok {
			continue
		}
		return strconv.ParseFloat(strings.Fields(rest)[0], 64)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no series %s", url, series)
}
