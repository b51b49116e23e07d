package process

import (
	"bufio"
	"fmt"
	"net/http"
	"regexp"
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

// seriesLabel is one name="value" of a series in the text format; values
// with escaped quotes are not needed by the series tests read.
var seriesLabel = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="([^"\\]*)"`)

// Series scrapes a Prometheus text endpoint and returns the labels and
// value of the first series named name, e.g. a build-info gauge.
func Series(client *http.Client, url, name string) (map[string]string, float64, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name+"{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			return nil, 0, fmt.Errorf("%s: malformed series %q", url, sc.Text())
		}
		out := map[string]string{}
		for _, m := range seriesLabel.FindAllStringSubmatch(labels, -1) {
			out[m[1]] = m[2]
		}
		v, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		return out, v, err
	}
	if err := sc.Err(); err != nil {
		return nil, 0, err
	}
	return nil, 0, fmt.Errorf("%s: no series %s{...}", url, name)
}
