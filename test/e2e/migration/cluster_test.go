package migration

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
)

// without returns the YAML stream of the objects in stream whose kind is
// none of kinds, for `kubectl get -f -`.
func without(stream []byte, kinds ...string) ([]byte, error) {
	objs, err := objects.Decode(stream)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, u := range objs {
		if slices.Contains(kinds, u.GetKind()) {
			continue
		}
		doc, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(doc)
	}
	return out.Bytes(), nil
}

// writeFile writes data to path, creating its directory.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
