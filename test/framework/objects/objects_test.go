package objects

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeSkipsEmptyDocumentsAndNamesTheOneThatFails(t *testing.T) {
	stream := "---\n# a comment alone\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n\n---\n" +
		`{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "b"}}` + "\n"
	objs, err := Decode([]byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+"/"+o.GetName())
	}
	if strings.Join(got, " ") != "ConfigMap/a Secret/b" {
		t.Errorf("Decode = %v, want ConfigMap/a Secret/b in order", got)
	}
	if n := len(OfKind(objs, "Secret")); n != 1 {
		t.Errorf("OfKind(Secret) = %d objects, want 1", n)
	}

	_, err = Decode([]byte("kind: ConfigMap\n---\nkind: [unclosed\n"))
	if err == nil || !strings.Contains(err.Error(), "document 2") {
		t.Errorf("Decode of a broken second document: error %v, want one naming document 2", err)
	}
}

func TestReadFileDecodesByJSONTagsAndNamesTheFileThatFails(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("rule_files: [a.yaml, b.yaml]\nunknown: kept out\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var got struct {
		RuleFiles []string `json:"rule_files"`
	}
	if err := ReadFile(good, &got); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.RuleFiles, " ") != "a.yaml b.yaml" {
		t.Errorf("ReadFile = %v, want a.yaml b.yaml", got.RuleFiles)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("rule_files: [unclosed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ReadFile(bad, &got); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("ReadFile of broken YAML: error %v, want one naming %s", err, bad)
	}
	if err := ReadFile(filepath.Join(dir, "missing.yaml"), &got); err == nil {
		t.Error("ReadFile of a missing file: no error")
	}
}
