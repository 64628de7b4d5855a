/* ssb_encode.c - the dictionaries: string constants of the SSB queries to the
 * integer codes stored in the columns, and back. Codes follow Crystal's
 * loader, so that the queries' string ranges stay integer ranges. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "ssb.h"
#include "ssb_internal.h"

static const char *const regions[SSB_NREGIONS] = {"AFRICA", "AMERICA", "ASIA", "EUROPE",
                                                   "MIDDLE EAST"};

/* TPC-H's nations in nation-key order, and the region of each. */
static const char *const nations[SSB_NNATIONS] = {
    "ALGERIA", "ARGENTINA", "BRAZIL",  "CANADA",       "EGYPT",   "ETHIOPIA",       "FRANCE",
    "GERMANY", "INDIA",     "INDONESIA", "IRAN",       "IRAQ",    "JAPAN",          "JORDAN",
    "KENYA",   "MOROCCO",   "MOZAMBIQUE", "PERU",      "CHINA",   "ROMANIA",        "SAUDI ARABIA",
    "VIETNAM", "RUSSIA",    "UNITED KINGDOM", "UNITED STATES"};
static const int32_t nation_region[SSB_NNATIONS] = {0, 1, 1, 1, 4, 0, 3, 3, 2, 2, 4, 4, 2,
                                                    4, 0, 0, 0, 1, 2, 3, 4, 2, 3, 3, 1};

/* Alphabetical, so that code order is string order. */
static const char *const shipmodes[SSB_NSHIPMODES] = {"AIR",     "FOB",  "MAIL", "RAIL",
                                                      "REG AIR", "SHIP", "TRUCK"};

static const char *const months[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

static int32_t find(const char *const *list, int n, const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < n; i++)
        if (strcmp(list[i], name) == 0) return i;
    return -1;
}

int32_t ssb__nation_region(int32_t nation) { return nation_region[nation]; }

int32_t ssb_region_code(const char *name) { return find(regions, SSB_NREGIONS, name); }
int32_t ssb_nation_code(const char *name) { return find(nations, SSB_NNATIONS, name); }
int32_t ssb_shipmode_code(const char *name) { return find(shipmodes, SSB_NSHIPMODES, name); }

const char *ssb_region_name(int32_t code)
{
    return code >= 0 && code < SSB_NREGIONS ? regions[code] : NULL;
}

const char *ssb_nation_name(int32_t code)
{
    return code >= 0 && code < SSB_NNATIONS ? nations[code] : NULL;
}

const char *ssb_shipmode_name(int32_t code)
{
    return code >= 0 && code < SSB_NSHIPMODES ? shipmodes[code] : NULL;
}

/* dbgen's city: the nation's first 9 characters, padded with spaces, and a digit. */
char *ssb_city_name(int32_t code, char *buf)
{
    if (code < 0 || code >= SSB_NNATIONS * 10) return NULL;
    snprintf(buf, 11, "%-9.9s%d", nations[code / 10], (int)(code % 10));
    return buf;
}

int32_t ssb_city_code(const char *name)
{
    if (!name || strlen(name) != 10) return -1;
    char buf[11];
    for (int32_t c = 0; c < SSB_NNATIONS * 10; c++)
        if (strcmp(ssb_city_name(c, buf), name) == 0) return c;
    return -1;
}

/* The number after "MFGR#" when it has `digits` digits, else -1. */
static int32_t mfgr_number(const char *name, size_t digits)
{
    if (!name || strncmp(name, "MFGR#", 5) != 0 || strlen(name + 5) != digits) return -1;
    int32_t v = 0;
    for (const char *d = name + 5; *d; d++) {
        if (!isdigit((unsigned char)*d)) return -1;
        v = v * 10 + (*d - '0');
    }
    return v;
}

static int valid_category(int32_t c) { return c / 10 >= 1 && c / 10 <= 5 && c % 10 >= 1 && c % 10 <= 5; }

int32_t ssb_mfgr_code(const char *name)
{
    int32_t v = mfgr_number(name, 1);
    return v >= 1 && v <= 5 ? v : -1;
}

int32_t ssb_category_code(const char *name)
{
    int32_t v = mfgr_number(name, 2);
    return valid_category(v) ? v : -1;
}

/* A brand is its category and a number 1..40: code category * 100 + number.
 * dbgen prints the number unpadded ("MFGR#121" is brand 1 of MFGR#12, "MFGR#1210"
 * brand 10), so both that form and the padded "MFGR#1201" are accepted. */
int32_t ssb_brand_code(const char *name)
{
    int32_t v = mfgr_number(name, 4);
    if (v < 0) {
        v = mfgr_number(name, 3);
        if (v < 0) return -1;
        v = v / 10 * 100 + v % 10;
    }
    return valid_category(v / 100) && v % 100 >= 1 && v % 100 <= 40 ? v : -1;
}

int32_t ssb_yearmonth_code(const char *ym)
{
    if (!ym || strlen(ym) != 7) return -1;
    for (int m = 0; m < 12; m++) {
        if (strncmp(ym, months[m], 3) != 0) continue;
        int32_t y = 0;
        for (int i = 3; i < 7; i++) {
            if (!isdigit((unsigned char)ym[i])) return -1;
            y = y * 10 + (ym[i] - '0');
        }
        return y >= 1992 && y <= 1998 ? y * 100 + m + 1 : -1;
    }
    return -1;
}
