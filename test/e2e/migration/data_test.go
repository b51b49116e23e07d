package migration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// uidsJSONPath prints kind/name=uid for each object of a `kubectl get -f`.
const uidsJSONPath = `jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.uid}{"\n"}{end}`

// data is the objects of the old manifest's CRDs, by the file that holds
// them and the UIDs they were created with.
type data struct {
	path string
	uids string
}

// createData creates the objects of the YAML file at path and returns
// them, to check later that they are the same objects: a CRD deleted and
// applied again would leave none of them, and a re-created object has a
// new UID.
func (e *env) createData(ctx context.Context, t *testing.T, path string) data {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.kubectl(ctx, nil, "create", "-f", abs); err != nil {
		t.Fatal(err)
	}
	uids, err := e.kubectl(ctx, nil, "get", "-f", abs, "-o", uidsJSONPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(uids, "\n") != 2 {
		t.Fatalf("the data objects: %q, want two", uids)
	}
	return data{path: abs, uids: uids}
}

// checkData checks that the data objects are the ones createData created.
func (e *env) checkData(ctx context.Context, t *testing.T, d data, when string) {
	t.Helper()
	uids, err := e.kubectl(ctx, nil, "get", "-f", d.path, "-o", uidsJSONPath)
	if err != nil || uids != d.uids {
		t.Errorf("the objects of the old manifest's CRDs %s: %q %v; want the ones created before, %q", when, uids, err, d.uids)
	}
}
