package httpapi

import (
	"fmt"
	"testing"
)

func TestCatalogueResponses(t *testing.T) {
	t.Parallel()
	var c catalogueResponses
	c.put(2, "plans", encodedJSON("v2"))
	if body, ok := c.get(2, "plans"); !ok || string(body) != "v2" {
		t.Fatalf("get(2) = %q, %v", body, ok)
	}
	if _, ok := c.get(3, "plans"); ok {
		t.Fatal("a body of version 2 served for version 3")
	}
	c.put(1, "plans", encodedJSON("v1")) // built from an older catalogue: ignored
	if body, _ := c.get(2, "plans"); string(body) != "v2" {
		t.Fatalf("an older build replaced the body: %q", body)
	}
	c.put(3, "products", encodedJSON("p3"))
	if _, ok := c.get(3, "plans"); ok {
		t.Fatal("version 2's bodies survived version 3")
	}
	for i := range maxCatalogueResponses + 10 {
		c.put(3, fmt.Sprint("key", i), encodedJSON("x"))
	}
	if len(c.bodies) > maxCatalogueResponses {
		t.Fatalf("%d bodies kept, at most %d allowed", len(c.bodies), maxCatalogueResponses)
	}
}
