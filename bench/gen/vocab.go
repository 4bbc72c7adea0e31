package main

// The word lists. Changing any of them changes the generated files for
// every seed. Words are lower-case ASCII letters so that the server's word
// counts see them as written.

var categories = []string{"tech", "travel", "food", "music", "sports", "science", "art", "books"}

// categoryWords are mixed into the text of an article of the category with
// the same index.
var categoryWords = [][]string{
	{"software", "compiler", "database", "network", "kernel", "cloud", "latency", "gopher"},
	{"journey", "airport", "island", "mountain", "passport", "beach", "hostel", "train"},
	{"recipe", "kitchen", "pasta", "bread", "spice", "flavor", "dinner", "garden"},
	{"melody", "guitar", "concert", "rhythm", "album", "piano", "chorus", "band"},
	{"match", "team", "goal", "season", "coach", "league", "runner", "score"},
	{"experiment", "theory", "particle", "telescope", "molecule", "energy", "data", "climate"},
	{"painting", "canvas", "gallery", "sculpture", "color", "museum", "sketch", "light"},
	{"novel", "chapter", "author", "library", "poem", "story", "reader", "page"},
}

// vocabulary is drawn Zipf-weighted: the first words most often.
var vocabulary = []string{
	"time", "people", "year", "way", "day", "thing", "world", "life", "hand", "part",
	"place", "case", "week", "work", "point", "number", "group", "problem", "fact", "idea",
	"good", "new", "first", "last", "long", "great", "little", "own", "other", "old",
	"right", "big", "high", "different", "small", "large", "next", "early", "young", "important",
	"make", "know", "take", "see", "come", "think", "look", "want", "give", "use",
	"find", "tell", "ask", "seem", "feel", "try", "leave", "call", "keep", "begin",
	"city", "home", "water", "room", "money", "story", "month", "night", "morning", "friend",
	"family", "school", "road", "river", "street", "market", "window", "door", "table", "letter",
	"simple", "quiet", "bright", "strange", "careful", "honest", "gentle", "rapid", "ancient", "modern",
	"build", "share", "write", "learn", "change", "follow", "start", "watch", "carry", "open",
	"question", "answer", "reason", "moment", "minute", "summer", "winter", "spring", "autumn", "weather",
	"paper", "stone", "glass", "metal", "wood", "cloth", "field", "forest", "valley", "harbor",
	"signal", "pattern", "method", "system", "model", "result", "detail", "choice", "effort", "chance",
	"silver", "golden", "purple", "orange", "yellow", "green", "blue", "crimson", "amber", "violet",
	"whisper", "thunder", "shadow", "mirror", "lantern", "compass", "ladder", "bridge", "tower", "castle",
	"notebook", "pencil", "ticket", "bottle", "basket", "pocket", "blanket", "candle", "engine", "wheel",
}

var firstNames = []string{
	"Ada", "Alan", "Barbara", "Claude", "Dennis", "Edsger", "Frances", "Grace",
	"Hedy", "Ivan", "John", "Ken", "Leslie", "Margaret", "Niklaus", "Ole",
	"Radia", "Rob", "Sophie", "Tim", "Ursula", "Vint", "Whitfield", "Yukihiro",
}

var lastNames = []string{
	"Allen", "Backus", "Cerf", "Dijkstra", "Engelbart", "Floyd", "Goldberg", "Hopper",
	"Iverson", "Johnson", "Kay", "Liskov", "Lamport", "McCarthy", "Naur", "Perlman",
	"Ritchie", "Stroustrup", "Thompson", "Wirth",
}

var cities = []string{
	"Amsterdam", "Berlin", "Lisbon", "London", "Madrid", "Oslo", "Paris", "Prague",
	"Rome", "Vienna", "Warsaw", "Zurich",
}

// tags has at most 64 entries: writeNodes tracks drawn tags in a uint64.
var tags = []string{
	"go", "graphql", "hbase", "rust", "python", "java", "kotlin", "swift",
	"cycling", "hiking", "chess", "photography", "cooking", "jazz", "running", "yoga",
}
