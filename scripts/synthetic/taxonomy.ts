// The fixed vocabulary of the synthetic data set: 10 top categories of 8 subcategories each,
// words per top category (titles and descriptions drawn mostly from their category's words, so
// items of one category are textually similar), filler words and tags. Data only.

export interface TopCategory {
  name: string;
  subcategories: readonly string[];
  words: readonly string[];
}

export const TAXONOMY: readonly TopCategory[] = [
  {
    name: 'news',
    subcategories: ['politics', 'world', 'local', 'economy', 'elections', 'crime', 'weather', 'education'],
    words: ['government', 'minister', 'parliament', 'vote', 'policy', 'crisis', 'report', 'city', 'council', 'protest', 'budget', 'reform', 'court', 'police', 'school', 'storm', 'mayor', 'treaty', 'campaign', 'debate'],
  },
  {
    name: 'sports',
    subcategories: ['football', 'basketball', 'tennis', 'cycling', 'athletics', 'motorsport', 'golf', 'swimming'],
    words: ['match', 'goal', 'season', 'coach', 'league', 'championship', 'team', 'player', 'final', 'record', 'race', 'injury', 'transfer', 'stadium', 'victory', 'defeat', 'medal', 'tournament', 'score', 'training'],
  },
  {
    name: 'technology',
    subcategories: ['smartphones', 'software', 'ai', 'security', 'gaming', 'hardware', 'startups', 'internet'],
    words: ['device', 'launch', 'update', 'chip', 'battery', 'model', 'privacy', 'cloud', 'app', 'developer', 'network', 'processor', 'algorithm', 'hack', 'console', 'browser', 'robot', 'data', 'screen', 'code'],
  },
  {
    name: 'business',
    subcategories: ['markets', 'companies', 'finance', 'energy', 'retail', 'realestate', 'jobs', 'trade'],
    words: ['stock', 'investor', 'profit', 'revenue', 'merger', 'bank', 'interest', 'inflation', 'shares', 'quarter', 'earnings', 'oil', 'price', 'growth', 'export', 'tariff', 'hiring', 'property', 'ceo', 'forecast'],
  },
  {
    name: 'entertainment',
    subcategories: ['movies', 'television', 'music', 'celebrities', 'books', 'theatre', 'streaming', 'awards'],
    words: ['film', 'series', 'album', 'actor', 'director', 'premiere', 'concert', 'novel', 'stage', 'episode', 'trailer', 'soundtrack', 'singer', 'festival', 'review', 'sequel', 'studio', 'audience', 'chart', 'star'],
  },
  {
    name: 'lifestyle',
    subcategories: ['fashion', 'beauty', 'relationships', 'parenting', 'home', 'garden', 'wellness', 'design'],
    words: ['style', 'trend', 'outfit', 'skincare', 'family', 'kids', 'interior', 'plants', 'routine', 'wedding', 'dating', 'decor', 'spring', 'summer', 'collection', 'makeup', 'furniture', 'habits', 'color', 'comfort'],
  },
  {
    name: 'food',
    subcategories: ['recipes', 'restaurants', 'baking', 'vegan', 'wine', 'coffee', 'grilling', 'desserts'],
    words: ['recipe', 'chef', 'dinner', 'pasta', 'bread', 'cake', 'flavor', 'kitchen', 'menu', 'spice', 'vegetables', 'chocolate', 'grill', 'breakfast', 'tasting', 'cheese', 'sauce', 'salad', 'roast', 'sweet'],
  },
  {
    name: 'travel',
    subcategories: ['europe', 'asia', 'americas', 'africa', 'cruises', 'hotels', 'hiking', 'cityguides'],
    words: ['trip', 'beach', 'island', 'flight', 'hotel', 'mountain', 'journey', 'coast', 'museum', 'guide', 'adventure', 'resort', 'trail', 'village', 'passport', 'backpack', 'destination', 'tour', 'harbor', 'landscape'],
  },
  {
    name: 'science',
    subcategories: ['space', 'climate', 'biology', 'physics', 'medicine', 'environment', 'archaeology', 'chemistry'],
    words: ['research', 'study', 'planet', 'telescope', 'species', 'climate', 'experiment', 'particle', 'vaccine', 'fossil', 'molecule', 'ocean', 'discovery', 'genome', 'orbit', 'emissions', 'laboratory', 'theory', 'cell', 'galaxy'],
  },
  {
    name: 'automotive',
    subcategories: ['electric', 'suv', 'sportscars', 'motorcycles', 'reviews', 'maintenance', 'industry', 'classics'],
    words: ['car', 'engine', 'drive', 'charging', 'range', 'horsepower', 'sedan', 'test', 'tires', 'dealer', 'hybrid', 'torque', 'interior', 'brake', 'highway', 'garage', 'motor', 'fuel', 'vintage', 'speed'],
  },
];

/** Shared by every category: their share keeps titles readable without blurring categories. */
export const FILLER_WORDS: readonly string[] = [
  'new', 'best', 'why', 'how', 'the', 'latest', 'big', 'first', 'top', 'inside', 'guide', 'week',
  'year', 'future', 'secret', 'story', 'ten', 'simple', 'today', 'ultimate',
];

export const TAGS: readonly string[] = [
  'breaking', 'exclusive', 'analysis', 'opinion', 'interview', 'explainer', 'live', 'premium', 'video',
  'photo', 'podcast', 'longread', 'howto', 'review', 'deal', 'bestseller', 'new', 'limited', 'trending',
  'editors-pick', 'local', 'global', 'family', 'budget',
];
