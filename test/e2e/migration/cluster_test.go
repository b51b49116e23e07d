package migration

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// without returns the YAML stream of the objects in stream whose kind is
// none of kinds, for `kubectl get -f -`.
func without(stream []byte, kinds ...string) ([]byte, error) {
	objs, err := objects(stream)
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

// objects decodes the objects of a YAML or JSON stream, skipping empty
// documents.
func objects(stream []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(u.Object) != 0 {
			out = append(out, u)
		}
	}
}

// writeFile writes data to path, creating its directory.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
