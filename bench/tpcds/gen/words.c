/*
 * words.c - the value domains of tpcds_gen: names, places, item attributes,
 * demographics, reasons, ship modes.
 *
 * They follow the distributions of dsdgen (tpcds.idx) in spirit and contain
 * every constant that the project's TPC-DS queries filter on (counties such as
 * 'Rush County' or 'Williamson County', cities 'Midway' and 'Fairview', the
 * zips of q15, categories, colors, sizes, units, education and marital
 * values, 'reason 28', ...).  No value holds '|' or '"'.
 */
#include "bench/tpcds/gen/gen.h"

#define LIST(name, ...)                                                                            \
    static const char *const name##_V[] = {__VA_ARGS__};                                           \
    const GenList name = {name##_V, GEN_LEN(name##_V)}

LIST(gen_first_names, "James", "John", "Robert", "Michael", "William", "David", "Richard",
     "Charles", "Joseph", "Thomas", "Christopher", "Daniel", "Paul", "Mark", "Donald", "George",
     "Kenneth", "Steven", "Edward", "Brian", "Ronald", "Anthony", "Kevin", "Jason", "Matthew",
     "Gary", "Timothy", "Jose", "Larry", "Jeffrey", "Mary", "Patricia", "Linda", "Barbara",
     "Elizabeth", "Jennifer", "Maria", "Susan", "Margaret", "Dorothy", "Lisa", "Nancy", "Karen",
     "Betty", "Helen", "Sandra", "Donna", "Carol", "Ruth", "Sharon", "Michelle", "Laura", "Sarah",
     "Kimberly", "Deborah", "Jessica", "Shirley", "Cynthia", "Angela", "Melissa");

LIST(gen_last_names, "Smith", "Johnson", "Williams", "Jones", "Brown", "Davis", "Miller", "Wilson",
     "Moore", "Taylor", "Anderson", "Thomas", "Jackson", "White", "Harris", "Martin", "Thompson",
     "Garcia", "Martinez", "Robinson", "Clark", "Rodriguez", "Lewis", "Lee", "Walker", "Hall",
     "Allen", "Young", "Hernandez", "King", "Wright", "Lopez", "Hill", "Scott", "Green", "Adams",
     "Baker", "Gonzalez", "Nelson", "Carter", "Mitchell", "Perez", "Roberts", "Turner", "Phillips",
     "Campbell", "Parker", "Evans", "Edwards", "Collins", "Stewart", "Sanchez", "Morris", "Rogers",
     "Reed", "Cook", "Morgan", "Bell", "Murphy", "Bailey", "Rivera", "Cooper", "Richardson", "Cox",
     "Howard", "Ward", "Torres", "Peterson", "Gray", "Ramirez", "James", "Watson", "Brooks",
     "Kelly", "Sanders", "Price", "Bennett", "Wood", "Barnes", "Ross", "Henderson", "Coleman",
     "Jenkins", "Perry", "Powell", "Long");

LIST(gen_salutations, "Mr.", "Mrs.", "Ms.", "Miss", "Sir", "Dr.");

LIST(gen_countries, "UNITED STATES", "CANADA", "MEXICO", "GERMANY", "FRANCE", "ITALY", "SPAIN",
     "UNITED KINGDOM", "IRELAND", "PORTUGAL", "BRAZIL", "ARGENTINA", "CHILE", "PERU", "JAPAN",
     "CHINA", "INDIA", "KOREA, REPUBLIC OF", "AUSTRALIA", "NEW ZEALAND", "EGYPT", "KENYA",
     "NIGERIA", "SOUTH AFRICA", "SWEDEN", "NORWAY", "FINLAND", "POLAND", "GREECE", "TURKEY");

LIST(gen_street_names, "Main", "Oak", "Park", "Pine", "Maple", "Cedar", "Elm", "Washington", "Lake",
     "Hill", "Walnut", "Spring", "North", "Ridge", "Church", "Willow", "Mill", "Sunset", "Railroad",
     "Jackson", "Cherry", "West", "Highland", "Johnson", "Lincoln", "Center", "Forest", "Jefferson",
     "Madison", "Meadow", "River", "Smith", "Poplar", "Wilson", "Woodland", "Dogwood", "College",
     "Green", "Hickory", "Lee", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth",
     "Ninth", "Tenth", "First");

LIST(gen_street_types, "Street", "ST", "Avenue", "Ave", "Boulevard", "Blvd", "Road", "RD",
     "Parkway", "Pkwy", "Way", "Wy", "Drive", "Dr.", "Circle", "Cir.", "Lane", "Ln", "Court",
     "Ct.");

/* dsdgen's most common small-town names, Midway and Fairview first. */
LIST(gen_cities, "Midway", "Fairview", "Oak Grove", "Five Points", "Pleasant Hill", "Centerville",
     "Riverside", "Mount Zion", "Oakland", "Greenwood", "Union", "Salem", "Marion", "Clinton",
     "Georgetown", "Franklin", "Springfield", "Lakeview", "Liberty", "Shiloh", "Glendale",
     "Pleasant Valley", "Oakdale", "Hopewell", "Mount Pleasant", "Bethel", "Friendship", "Highland",
     "Sunnyside", "Unionville", "Red Hill", "Newport", "Woodland", "Walnut Grove", "Spring Hill",
     "Woodville", "Antioch", "Concord", "Edgewood", "Wildwood", "Jamestown", "Lebanon",
     "Forest Hills", "Pine Grove", "Summit", "Greenville", "Oak Hill", "Plainview", "Hamilton",
     "Waterloo");

/* The counties the TPC-DS queries name come first (several of them twice, so that
 * they are dense enough for the filters at small scale factors). */
LIST(gen_counties, "Rush County", "Toole County", "Jefferson County", "Dona Ana County",
     "La Porte County", "Williamson County", "Walker County", "Richland County", "Gaines County",
     "Douglas County", "Fairfield County", "Ziebach County", "Luce County", "Franklin Parish",
     "Bronx County", "Orange County", "Barrow County", "Daviess County", "Salem County",
     "Terrell County", "Mobile County", "Huron County", "Kittitas County", "Arthur County",
     "Halifax County", "Furnas County", "Levy County", "Tehama County", "Sumner County",
     "Marion County", "Maverick County", "Raleigh County", "Wadena County", "Perry County",
     "Lea County", "Pennington County", "Coal County", "Oglethorpe County", "Stark County",
     "Dauphin County", "Wilkinson County", "Jackson County", "Franklin County", "Washington County",
     "Lincoln County", "Jefferson County", "Rush County", "Toole County", "Dona Ana County",
     "La Porte County");

LIST(gen_location_types, "apartment", "condo", "single family");

LIST(gen_colors, "almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched",
     "blue", "blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon", "chocolate",
     "coral", "cornflower", "cornsilk", "cream", "cyan", "dark", "deep", "dim", "dodger", "drab",
     "firebrick", "floral", "forest", "frosted", "gainsboro", "ghost", "goldenrod", "green", "grey",
     "honeydew", "hot", "indian", "ivory", "khaki", "lace", "lavender", "lawn", "lemon", "light",
     "lime", "linen", "magenta", "maroon", "medium", "metallic", "midnight", "mint", "misty",
     "moccasin", "navajo", "navy", "olive", "orange", "orchid", "pale", "papaya", "peach", "peru",
     "pink", "plum", "powder", "puff", "purple", "red", "rose", "rosy", "royal", "saddle", "salmon",
     "sandy", "seashell", "sienna", "sky", "slate", "smoke", "snow", "spring", "steel", "tan",
     "thistle", "tomato", "turquoise", "violet", "wheat", "white", "yellow");

LIST(gen_sizes, "petite", "small", "medium", "large", "extra large", "economy", "N/A");

LIST(gen_units, "Unknown", "Each", "Dozen", "Case", "Pallet", "Gross", "Carton", "Box", "Bunch",
     "Bundle", "Oz", "Lb", "Tsp", "Tbl", "Cup", "Dram", "Ounce", "Pound", "Ton", "Gram", "N/A");

LIST(gen_containers, "Unknown");

LIST(gen_education, "Primary", "Secondary", "College", "2 yr Degree", "4 yr Degree",
     "Advanced Degree", "Unknown");

LIST(gen_marital, "M", "S", "D", "W", "U");

LIST(gen_credit, "Good", "High Risk", "Low Risk", "Unknown");

LIST(gen_buy_potential, ">10000", "5001-10000", "1001-5000", "501-1000", "0-500", "Unknown");

/* Reasons 1..22 are named; the rest are "reason N" as in dsdgen (q93 asks 'reason 28'). */
LIST(gen_reasons, "Package was damaged", "Stopped working", "Did not get it on time",
     "Not the product that was ordred", "Parts missing", "Does not work with a product that I have",
     "Gift exchange", "Did not like the color", "Did not like the model", "Did not like the make",
     "Did not like the warranty", "No service location in my area",
     "Found a better price in a store", "Found a better extended warranty in a store",
     "Not working any more", "Did not fit", "Wrong size", "Lost my job", "unauthoized purchase",
     "duplicate purchase", "its is a boy", "it is a girl");

LIST(gen_ship_types, "REGULAR", "EXPRESS", "NEXT DAY", "OVERNIGHT", "TWO DAY", "LIBRARY");

LIST(gen_ship_codes, "AIR", "SURFACE", "SEA", "BIKE", "HAND", "MESSENGER");

LIST(gen_carriers, "UPS", "FEDEX", "AIRBORNE", "USPS", "DHL", "TBS", "ZHOU", "ZOUROS", "MSC",
     "LATVIAN", "ALLIANCE", "ORIENTAL", "BARIAN", "BOXBUNDLES", "GREAT EASTERN", "DIAMOND",
     "RUPEKSA", "GERMA", "HARMSTORF", "PRIVATECARRIER");

LIST(gen_web_page_types, "ad", "dynamic", "feedback", "general", "order", "protected", "welcome");

LIST(gen_cc_names, "NY Metro", "Mid Atlantic", "North Midwest", "Pacific Northwest", "California",
     "Hawaii/Alaska", "Central Midwest", "South Central");

LIST(gen_hours, "8AM-4PM", "8AM-12AM", "8AM-8AM");

LIST(gen_managers, "William Ward", "Scott Smith", "Edwin Adams", "David Thomas", "Robert Lee",
     "Larry Mccray", "Charles Bartley", "Thomas Pollack", "Bob Belcher", "Felipe Perkins",
     "Gary Colburn", "Dion Speer", "Mark Hightower", "John Wells", "Jack Little");

/* The zips of q15 (and q45), so that the zip branch of their filters matches. */
LIST(gen_zips, "85669", "86197", "88274", "83405", "86475", "85392", "85460", "80348", "81792");

LIST(gen_catalog_types, "bi-annual", "quarterly", "monthly");

LIST(gen_brand_a, "amalg", "edu pack", "exporti", "import", "scholar", "univ", "maxi", "corp",
     "brand", "namel");

LIST(gen_brand_b, "amalg", "importo", "scholar", "univamalg", "maxi", "nameless", "brand", "corp",
     "exporti", "edu pack");

/* dsdgen's syllables, one per decimal digit: 128 is "oughtableeing", 4 is "ese". */
LIST(gen_syllables, "bar", "ought", "able", "pri", "ese", "anti", "cally", "ation", "eing", "n st");

/* ---------------------------------------------------------------- items */

static const char *const WOMEN[] = {"dresses", "fragrances", "maternity", "swimwear"};
static const char *const MEN[] = {"accessories", "pants", "shirts", "sports-apparel"};
static const char *const CHILDREN[] = {"infants", "newborn", "school-uniforms", "toddlers"};
static const char *const SHOES[] = {"athletic", "kids", "mens", "womens"};
static const char *const MUSIC[] = {"classical", "country", "pop", "rock"};
static const char *const JEWELRY[] = {"birdal",   "bracelets",     "consignment",   "costume",
                                      "custom",   "diamonds",      "earings",       "estate",
                                      "gold",     "jewelry boxes", "loose stones",  "mens watch",
                                      "pendants", "rings",         "semi-precious", "womens watch"};
static const char *const HOME[] = {"accent",          "bathroom", "bedding",  "blinds/shades",
                                   "curtains/drapes", "decor",    "flatware", "furniture",
                                   "glassware",       "kids",     "lighting", "mattresses",
                                   "paint",           "rugs",     "tables",   "wallpaper"};
static const char *const SPORTS[] = {"archery", "athletic shoes", "baseball", "basketball",
                                     "camping", "fishing",        "fitness",  "football",
                                     "golf",    "guns",           "hockey",   "optics",
                                     "outdoor", "pools",          "sailing",  "tennis"};
static const char *const BOOKS[] = {"arts",           "business",  "computers", "cooking",
                                    "entertainments", "fiction",   "history",   "home repair",
                                    "mystery",        "parenting", "reference", "romance",
                                    "science",        "self-help", "sports",    "travel"};
static const char *const ELECTRONICS[] = {
    "audio",    "automotive", "cameras",     "camcorders", "disk drives", "dvd/vcr players",
    "karoke",   "memory",     "monitors",    "musical",    "personal",    "portable",
    "scanners", "stereo",     "televisions", "wireless"};

#define CATEGORY(name, classes)                                                                    \
    {                                                                                              \
        name, classes, GEN_LEN(classes)                                                            \
    }

const GenCategory gen_categories[] = {
    CATEGORY("Women", WOMEN),       CATEGORY("Men", MEN),
    CATEGORY("Children", CHILDREN), CATEGORY("Shoes", SHOES),
    CATEGORY("Music", MUSIC),       CATEGORY("Jewelry", JEWELRY),
    CATEGORY("Home", HOME),         CATEGORY("Sports", SPORTS),
    CATEGORY("Books", BOOKS),       CATEGORY("Electronics", ELECTRONICS),
};

const int gen_n_categories = GEN_LEN(gen_categories);
