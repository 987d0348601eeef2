// The plan optimizer's table (compiler/plan/PlanPasses.def): each fusion's
// name is the one `--no-fuse` takes, and every fusion in it, held to the
// plan without it on the zoo, keeps the results (the same bits, or within
// the kernels' tolerance where the row says so) and does fire: a row added
// is tested as it is added, and a fusion that stops matching fails here.
#include <set>

#include "compiler/plan/PlanPass.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

TEST(PlanPassTable, NamesEachFusionOnce) {
  std::set<std::string> names;
  std::vector<std::string> listed;
  for (const plan::PlanPass *pass : plan::planPasses()) {
    EXPECT_TRUE(names.insert(pass->name).second) << pass->name;
    EXPECT_EQ(plan::findFusion(pass->name), pass->switchable ? pass : nullptr) << pass->name;
    EXPECT_EQ(pass->switchable, *pass->summary != '\0') << pass->name << ": help text";
    if (pass->switchable)
      listed.push_back(pass->name);
  }
  EXPECT_EQ(plan::fusionNames(), listed);
  EXPECT_EQ(plan::findFusion("bogus"), nullptr);
  EXPECT_FALSE(FusionSet::allBut(plan::castFolding).enabled(plan::castFolding));
  EXPECT_TRUE(FusionSet::allBut(plan::castFolding).enabled(plan::gemmEpilogues));
}

/// The training graphs every fusion is held on: a perceptron (relu and
/// bias gradients), a small ResNet-18 (batch norms), a one-layer BERT
/// (attention, GELU, layer norms) and a one-layer GPT (fused causal
/// attention), trained at O1 in f16.
std::vector<mlir::OwningOpRef<mlir::ModuleOp>> zoo(mlir::MLIRContext &ctx) {
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> graphs;
  graphs.push_back(test::smallBertTraining(ctx, "O1", "f16"));
  for (auto [name, sets] :
       {std::pair<const char *, std::map<std::string, std::string>>{
            "mlp", {{"batch", "4"}, {"hidden", "16"}}},
        {"resnet", {{"depth", "18"}, {"batch", "2"}, {"image", "16"}, {"classes", "4"}}},
        {"gpt2",
         {{"layers", "1"}, {"hidden", "32"}, {"heads", "2"}, {"seq", "8"}, {"vocab", "64"},
          {"batch", "2"}}}}) {
    auto m = buildModel(ctx, name, sets);
    AmpSettings amp;
    TrainSettings train;
    train.optimizer = "adam";
    runTrainingPipeline(*m, amp, train);
    graphs.push_back(std::move(m));
  }
  return graphs;
}

using Results = std::map<std::string, std::vector<std::byte>>;

/// The params both plans train (weight copies are params of one plan only)
/// hold the same bytes after three steps on fixed data.
void expectSameParams(const Results &want, const Results &got, const std::string &what) {
  int compared = 0;
  for (const auto &[name, bytes] : want)
    if (got.count(name)) {
      EXPECT_EQ(bytes, got.at(name)) << what << ": " << name << " differs";
      ++compared;
    }
  EXPECT_GT(compared, 0) << what;
}

TEST(PlanPassTable, EachFusionFiresAndKeepsTheResults) {
  mlir::MLIRContext ctx;
  auto graphs = zoo(ctx);
  rt::Target target = test::cudaChoicesOnCpu(true);
  // Each graph's plan with every fusion, and its results, made once.
  std::vector<std::string> withJson;
  std::vector<Results> withResults;
  for (auto &m : graphs) {
    rt::Plan with = lowerToPlan(*m, target);
    withJson.push_back(rt::planToJson(with));
    withResults.push_back(test::fixedRunResults(with, true));
  }
  for (const plan::PlanPass *pass : plan::planPasses()) {
    if (!pass->switchable || pass == &plan::recompute) // recompute: the training pipeline's
      continue;
    bool fired = false;
    for (size_t g = 0; g < graphs.size(); ++g) {
      rt::Plan without = lowerToPlan(*graphs[g], target, test::fusionsWithout(*pass));
      bool differs = rt::planToJson(without) != withJson[g];
      fired |= differs;
      if (pass->exact && differs)
        expectSameParams(test::fixedRunResults(without, true), withResults[g], pass->name);
    }
    EXPECT_TRUE(fired) << pass->name << " fused nothing on the zoo";
  }
}

} // namespace
