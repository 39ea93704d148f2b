package urlkey_test

import (
	"fmt"
	"log"

	"github.com/edgebloom/edgebloom/urlkey"
)

func ExampleCanonical() {
	for _, u := range []string{
		"HTTP://User:Pw@Bücher.Example:80/a/./b/../c?b=2&utm_source=x&a=1#top",
		"https://例子.测试/新闻?id=1",
		"http://[2001:DB8:0:0:0:0:0:1]:8080/%7euser/",
		"ftp://example.com/",
	} {
		key, err := urlkey.Canonical(u, urlkey.Options{})
		fmt.Println(key, err)
	}
	key, _ := urlkey.Canonical("https://example.com/?utm_source=x&id=1", urlkey.Options{KeepTracking: true})
	fmt.Println(key)
	// Output:
	// http://xn--bcher-kva.example/a/c?a=1&b=2 <nil>
	// https://xn--fsqu00a.xn--0zwm56d/%E6%96%B0%E9%97%BB?id=1 <nil>
	// http://[2001:db8::1]:8080/~user/ <nil>
	//  urlkey: scheme "ftp" is not http, https, ws or wss
	// https://example.com/?id=1&utm_source=x
}

// docs/urls.md's example: the canonical form is the key a Bloom filter gets.
func ExampleCanonical_filterKey() {
	key, err := urlkey.Canonical("HTTPS://Bücher.Example:443/a/../b?z=1&utm_source=x&a=2#top", urlkey.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(key) // then f.AddString(key)
	// Output: https://xn--bcher-kva.example/b?a=2&z=1
}
