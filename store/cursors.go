package store

import "github.com/hbgraph/hbgraph/store/keys"

// ArticleCursor is the cursor article a has in its author's timeline
// (Articles without a category), as a page of it hands out: what an event
// about a carries, so that a client catches up with after: it.
func ArticleCursor(a Article) (string, error) {
	k, err := keys.ParseArticleID(a.ID)
	if err != nil {
		return "", invalid("article id %q", a.ID)
	}
	row, err := k.Key()
	if err != nil {
		return "", err
	}
	pr := pageRange{layout: keys.TimelineLayout, table: keys.TableArticles, family: keys.FamilyArticles, prefix: keys.TimelinePrefix(k.Author)}
	return pr.cursor(row), nil
}

// RelationshipCursor is the cursor rel has in node's relationships of its
// type in direction dir (node is its start for Outgoing, its end for
// Incoming), as a page of Adjacent hands out.
func RelationshipCursor(rel Relationship, node string, dir Direction) (string, error) {
	pr, err := adjacencyRange(node, rel.Type, dir)
	if err != nil {
		return "", err
	}
	other := rel.End
	if dir == keys.Incoming {
		other = rel.Start
	}
	row, err := keys.Adjacency{Node: node, Dir: dir, Type: rel.Type, Created: rel.Created.UnixMilli(), Other: other}.Key()
	if err != nil {
		return "", err
	}
	return pr.cursor(row), nil
}
