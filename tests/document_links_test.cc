// DocumentLinks (agent/document_links.h): which pages a table cell names,
// checked against hand-worked cases; and NamesFieldWord's abbreviations.
#include "agent/document_links.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/schema_index.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using Docs = std::vector<uint32_t>;

TEST(TitleAliasKeys, TitleDisambiguatorAndQualifier) {
  EXPECT_EQ(TitleAliasKeys("Bathurst, New South Wales"),
            (std::vector<std::string>{"bathurst new south wales", "bathurst"}));
  EXPECT_EQ(TitleAliasKeys("John Goss (racing driver)"),
            (std::vector<std::string>{"john goss racing driver", "john goss"}));
  EXPECT_EQ(TitleAliasKeys("Berlin"), std::vector<std::string>{"berlin"});
  EXPECT_EQ(TitleAliasKeys("Io, moon"), std::vector<std::string>{"io moon"});  // "io" is too short
}

class DocumentLinksTest : public ::testing::Test {
 protected:
  const std::vector<std::string> titles_ = {
      "Bathurst, New South Wales",        // 0
      "John Goss (racing driver)",        // 1
      "Piscataway Township, New Jersey",  // 2
      "Thobias Fredriksson",              // 3
      "Björn Lind",                       // 4
      "Columbus, Ohio",                   // 5
      "Columbus, Georgia",                // 6
      "New Jersey",                       // 7
      "New York City",                    // 8
  };
  const DocumentLinks links_{titles_};
};

TEST_F(DocumentLinksTest, TitleOrAliasIsNamedExactly) {
  EXPECT_EQ(links_.Named("Bathurst"), Docs{0});
  EXPECT_EQ(links_.Named("bathurst, new south wales"), Docs{0});
  EXPECT_EQ(links_.Named("John Goss"), Docs{1});
  EXPECT_EQ(links_.Named("New Jersey"), Docs{7});  // the title wins over alias prefixes
  EXPECT_EQ(links_.Named("Columbus"), (Docs{5, 6}));  // an alias of two pages names both
}

TEST_F(DocumentLinksTest, AUniqueAliasBeginningWithTheValue) {
  EXPECT_EQ(links_.Named("Piscataway"), Docs{2});
  EXPECT_TRUE(links_.Named("New").empty());     // too short and several pages begin so
  EXPECT_TRUE(links_.Named("Piscat").empty());  // whole words only
}

TEST_F(DocumentLinksTest, TitlesWrittenInTheValue) {
  EXPECT_EQ(links_.Named("Thobias Fredriksson Björn Lind"), (Docs{3, 4}));
  EXPECT_EQ(links_.Named("born in New York City in 1950"), Docs{8});
  EXPECT_TRUE(links_.Named("Fredriksson").empty());  // one word of a title is not the title
  EXPECT_TRUE(links_.Named("").empty());
  EXPECT_TRUE(DocumentLinks().Named("Bathurst").empty());
}

TEST(NamesFieldWord, SingularFormsAndAbbreviations) {
  EXPECT_TRUE(NamesFieldWord("names", "name"));
  EXPECT_TRUE(NamesFieldWord("position", "pos"));
  EXPECT_TRUE(NamesFieldWord("population", "pop"));
  EXPECT_TRUE(NamesFieldWord("nationality", "nat"));
  EXPECT_FALSE(NamesFieldWord("pose", "pos"));       // an abbreviation is 2+ letters shorter
  EXPECT_FALSE(NamesFieldWord("november", "no"));    // 3 letters at least
  EXPECT_FALSE(NamesFieldWord("purposes", "pos"));   // it must begin the word
  EXPECT_FALSE(NamesFieldWord("points", "p2s"));     // letters only
  EXPECT_FALSE(NamesFieldWord("", "pos"));
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
