package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// The variant of BenchmarkHandler that is the baseline of the others.
const genericVariant = "generic"

func (r *runner) handlerSection(ctx context.Context) error {
	root, err := tools.RepoRoot()
	if err != nil {
		return err
	}
	args := []string{"test", "./pkg/admission", "-run", "^$", "-bench", "^BenchmarkHandler$", "-benchmem", "-count", "1", "-benchtime", r.cfg.BenchTime}
	bench, err := process.Command{Dir: root}.Run(ctx, "go", args...)
	if err != nil {
		return err
	}
	rows, err := parseBenchmarks([]byte(bench.Stdout))
	if err != nil {
		return err
	}
	res := &HandlerResults{Command: "go " + strings.Join(args, " "), Rows: rows}
	base := map[string]HandlerBench{}
	for _, b := range rows {
		if b.Variant == genericVariant {
			base[b.Payload] = b
		}
	}
	for _, b := range rows {
		g, ok := base[b.Payload]
		if b.Variant == genericVariant || !ok {
			continue
		}
		res.Compare = append(res.Compare, HandlerFigure{
			Payload: b.Payload, Variant: b.Variant,
			NsPerOp:     figure(b.NsPerOp, g.NsPerOp),
			BytesPerOp:  figure(b.BytesPerOp, g.BytesPerOp),
			AllocsPerOp: figure(b.AllocsPerOp, g.AllocsPerOp),
		})
	}
	if len(res.Compare) == 0 {
		return fmt.Errorf("no benchmark to compare with the %s variant in:\n%s", genericVariant, bench.Stdout)
	}
	for _, b := range rows {
		r.progress("%-22s %-14s %10.0f ns/op %8.0f B/op %6.0f allocs/op", b.Payload, b.Variant, b.NsPerOp, b.BytesPerOp, b.AllocsPerOp)
	}
	r.res.Handler = res
	return nil
}

// parseBenchmarks reads the lines of BenchmarkHandler/<payload>/<variant>
// from go test output.
func parseBenchmarks(out []byte) ([]HandlerBench, error) {
	var rows []HandlerBench
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkHandler/") {
			continue
		}
		name := f[0]
		// go test appends -GOMAXPROCS unless it is 1.
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		parts := strings.Split(name, "/")
		if len(parts) != 3 {
			continue
		}
		b := HandlerBench{Payload: parts[1], Variant: parts[2]}
		var err error
		if b.Iterations, err = strconv.Atoi(f[1]); err != nil {
			return nil, fmt.Errorf("parse %q: %w", sc.Text(), err)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("parse %q: %w", sc.Text(), err)
			}
			switch f[i+1] {
			case "ns/op":
				b.NsPerOp = v
			case "B/op":
				b.BytesPerOp = v
			case "allocs/op":
				b.AllocsPerOp = v
			}
		}
		rows = append(rows, b)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no BenchmarkHandler results in:\n%s", out)
	}
	return rows, nil
}
