package bench

import "strconv"

// Parts of the second corpus's URLs. No part holds a digit before the
// index, except percent escapes, which never come right before it.
var (
	// Host labels as a browser shows them, in Unicode, not Punycode.
	idnLabels = [...]string{"münchen", "bücher", "straße", "café", "例え", "東京", "新闻",
		"서울", "пример", "москва", "παράδειγμα", "مثال", "उदाहरण", "ตัวอย่าง", "köln", "zürich"}
	idnTLDs = [...]string{".de", ".jp", ".cn", ".kr", ".рф", ".中国", ".com", ".ch", ".in", ".th"}
	// Path words in Chinese, Japanese and Korean.
	cjkWords = [...]string{"新闻", "天气", "北京", "上海", "体育", "东京", "ラーメン", "レシピ",
		"価格", "比較", "ニュース", "天気予報", "뉴스", "검색", "날씨", "쇼핑", "서울", "中文"}
	emoji = [...]string{"🍕", "🚀", "😀", "🎉", "🐱", "❤️", "👍🏽", "🇯🇵", "☕", "🌧️"}
	// Percent-encoded UTF-8 and mixed escapes, as links carry them.
	escaped = [...]string{"caf%C3%A9", "%E6%96%B0%E9%97%BB", "na%C3%AFve", "%ED%8C%90",
		"cr%C3%A8me-br%C3%BBl%C3%A9e", "%F0%9F%8D%95", "a%20b", "%D0%BC%D0%B8%D1%80", "se%C3%B1or"}
)

// appendIntlURL appends URL number i (i < 2^40) of the second corpus to dst:
// like appendURL's, but with a quarter of the hosts internationalized
// domain names in Unicode and path words in Chinese, Japanese or Korean,
// emoji and percent escapes: about three quarters of the URLs hold
// non-ASCII bytes (UTF-8), and a tenth more only percent escapes. Its keys
// are 30 to 250 bytes, 77 on average, about the length of appendURL's.
//
//	https://<host>/<segment>[/<segment>…]-<id>[?q=<word>]
func appendIntlURL(dst []byte, i uint64) []byte {
	r := rng(corpusSeed ^ 0x17e1 ^ i*0x9fb21c651e98df25)
	dst = append(dst, "https://"...)
	if r.intn(4) == 0 {
		dst = append(dst, idnLabels[r.intn(len(idnLabels))]...)
		dst = append(append(dst, '-'), syllables[r.intn(len(syllables))]...)
		dst = append(dst, idnTLDs[r.intn(len(idnTLDs))]...)
	} else {
		dst = appendHost(dst, &r)
	}
	for range 1 + r.intn(3) {
		dst = append(dst, '/')
		for w := range 1 + r.intn(4) {
			if w > 0 {
				dst = append(dst, '-')
			}
			dst = appendWord(dst, &r)
		}
	}
	dst = strconv.AppendUint(append(dst, '-'), scramble(i), 10)
	if r.intn(10) < 3 {
		dst = appendWord(append(dst, "?q="...), &r)
	}
	return dst
}

// appendWord appends one path word: CJK 15%, emoji 5%, percent-escaped
// 10%, ASCII otherwise.
func appendWord(dst []byte, r *rng) []byte {
	switch n := r.intn(20); {
	case n < 3:
		return append(dst, cjkWords[r.intn(len(cjkWords))]...)
	case n < 4:
		return append(append(dst, emoji[r.intn(len(emoji))]...), words[r.intn(len(words))]...)
	case n < 6:
		return append(dst, escaped[r.intn(len(escaped))]...)
	}
	return append(dst, words[r.intn(len(words))]...)
}
