package process

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// Metric scrapes a Prometheus text endpoint and returns the value of the
// series whose name and label text match exactly, e.g. name
// "cabundle_syncer_is_leader" and labels "" or `{result="success"}`.
func Metric(client *http.Client, url, name, labels string) (float64, error) {
	series := name + labels + " "
	line, err := scrapeLine(client, url, series, name+labels)
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(strings.Fields(strings.TrimPrefix(line, series))[0], 64)
}

// seriesLabel is one name="value" of a series in the text format; values
// with escaped quotes are not needed by the series tests read.
var seriesLabel = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="([^"\\]*)"`)

// Series scrapes a Prometheus text endpoint and returns the labels and
// value of the first series named name, e.g. a build-info gauge.
func Series(client *http.Client, url, name string) (map[string]string, float64, error) {
	line, err := scrapeLine(client, url, name+"{", name+"{...}")
	if err != nil {
		return nil, 0, err
	}
	labels, value, ok := strings.Cut(strings.TrimPrefix(line, name+"{"), "} ")
	if !ok {
		return nil, 0, fmt.Errorf("%s: malformed series %q", url, line)
	}
	out := map[string]string{}
	for _, m := range seriesLabel.FindAllStringSubmatch(labels, -1) {
		out[m[1]] = m[2]
	}
	v, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
	return out, v, err
}

// Ready returns nil if GET url answers 200 OK, and otherwise what it
// answered, for a wait on a child's readiness probe. It reads the body to
// the end, so that client reuses the connection.
func Ready(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answers %s", url, resp.Status)
	}
	return nil
}

// scrapeLine returns the first line of a Prometheus text endpoint that
// starts with prefix, or an error that names the series it wanted.
func scrapeLine(client *http.Client, url, prefix, series string) (string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			return sc.Text(), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no series %s", url, series)
}
