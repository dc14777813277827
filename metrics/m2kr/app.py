"""Gradio widget for the Hub Space: loads this folder's metric."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

launch_gradio_widget(evaluate.load(str(Path(__file__).resolve().parent)))
